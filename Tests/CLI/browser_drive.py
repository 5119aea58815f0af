"""Plays a person in a real browser (headless Chromium through chromedriver and Selenium) on the
dev issuer's pages, saving a screenshot of every page it sees into OUTDIR.

    browser_drive.py signin URL OUTDIR   # the authorization URL of a browser login: a wrong password
                                         # first, then alice/wonderland and "Sign in and allow";
                                         # ends on the agent's callback page
    browser_drive.py device URL OUTDIR   # a device login's verification_uri_complete: approve as alice

Prints {"pages": [{"name", "title", "url", "text", "screenshot", "lang", "viewport", "alert",
"username"}...]} as JSON. CHROMIUM and CHROMEDRIVER name the binaries (default: on PATH).
Every wait is bounded (10 s)."""
import json
import os
import shutil
import sys

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

mode, url, outdir = sys.argv[1:4]
options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=900,800",
                 "--no-first-run", "--disable-extensions", "--user-data-dir=" + os.path.join(outdir, "profile")):
    options.add_argument(argument)
service = Service(os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver"))
driver = webdriver.Chrome(service=service, options=options)
driver.set_page_load_timeout(10)
pages = []


def page(name, title):
    """Waits for the page titled `title` to be loaded, then takes its screenshot and the facts a
    test checks about it."""
    WebDriverWait(driver, 10, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.title == title and d.execute_script("return document.readyState") == "complete")
    path = os.path.join(outdir, f"{len(pages) + 1:02d}-{name}.png")
    driver.save_screenshot(path)
    alerts = driver.find_elements(By.CSS_SELECTOR, '[role="alert"]')
    usernames = driver.find_elements(By.ID, "username")
    viewport = driver.find_elements(By.CSS_SELECTOR, 'meta[name="viewport"]')
    pages.append({
        "name": name, "title": driver.title, "url": driver.current_url, "screenshot": path,
        "text": driver.find_element(By.TAG_NAME, "body").text,
        "lang": driver.find_element(By.TAG_NAME, "html").get_attribute("lang"),
        "viewport": viewport[0].get_attribute("content") if viewport else None,
        "alert": alerts[0].text if alerts and alerts[0].is_displayed() else None,
        "username": usernames[0].get_attribute("value") if usernames else None,
        # The stylesheet applied: the card's computed background is not the browser default.
        "styled": driver.execute_script(
            "const m = document.querySelector('main'); return !!m && getComputedStyle(m).borderRadius !== '0px'"),
    })


def submit(username, password):
    """Types into the form (the username only when given) and clicks its approve button."""
    if username is not None:
        field = driver.find_element(By.ID, "username")
        field.clear()
        field.send_keys(username)
    driver.find_element(By.ID, "password").send_keys(password)
    # A mark on this document: gone once the next one (the answer to the form) is shown. Asking
    # mid-navigation can fail; the wait asks again.
    driver.execute_script("window.beforeSubmit = true")
    driver.find_element(By.CSS_SELECTOR, 'button[name="action"][value="approve"]').click()
    WebDriverWait(driver, 10, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return window.beforeSubmit === undefined"))


try:
    driver.get(url)
    if mode == "signin":
        page("sign-in", "Sign in")
        submit("alice", "not-the-password")
        page("wrong-password", "Sign in")
        submit(None, "wonderland")  # the username stayed
        page("agent-callback", "Login finished")
    elif mode == "device":
        page("device", "Device login")
        submit("alice", "wonderland")
        page("device-approved", "Device approved")
    else:
        raise SystemExit(f"unknown mode {mode}")
finally:
    driver.quit()
print(json.dumps({"pages": pages}))
