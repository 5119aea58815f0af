"""Settings of the django-oauth-toolkit server that auth-agent's interop tests run against.

Everything that varies per run comes from the environment set by start-server.sh:

INTEROP_BASE_URL                   http://127.0.0.1:PORT, for the device verification URIs
INTEROP_DB_PATH                    a fresh SQLite file
INTEROP_SECRET_KEY                 Django's signing key, random per run
INTEROP_RSA_KEY_PATH               PEM of the RSA key that signs ID tokens (RS256)
INTEROP_ACCESS_TOKEN_LIFETIME      seconds (default 60)
INTEROP_REFRESH_GRACE_SECONDS      REFRESH_TOKEN_GRACE_PERIOD_SECONDS (default 0)
INTEROP_DEVICE_INTERVAL            device flow polling interval in seconds (default 5)

The server is loopback-only and throwaway: credentials are test fixtures and
hashing is deliberately cheap (see hashers.py) to keep the run fast.
"""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_int(name, default):
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


BASE_URL = os.environ.get("INTEROP_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
SECRET_KEY = os.environ.get("INTEROP_SECRET_KEY") or "interop-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "oauth2_provider",
    "interop_server",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

ROOT_URLCONF = "interop_server.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("INTEROP_DB_PATH", str(BASE_DIR / "interop.sqlite3")),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
PASSWORD_HASHERS = ["interop_server.hashers.FastPBKDF2PasswordHasher"]
USE_TZ = True
STATIC_URL = "static/"
LOGIN_URL = "/accounts/login/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
}

_rsa_key_path = os.environ.get("INTEROP_RSA_KEY_PATH")
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": Path(_rsa_key_path).read_text() if _rsa_key_path else "",
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Profile",
        "email": "Email address",
        "read": "Read",
        "write": "Write",
        # Listed in scopes_supported, so a learning agent asks for it (issue 31); DOT gives refresh tokens without it too.
        "offline_access": "Offline access",
    },
    "DEFAULT_SCOPES": ["read"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": _env_int("INTEROP_ACCESS_TOKEN_LIFETIME", 60),
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": _env_int("INTEROP_REFRESH_GRACE_SECONDS", 0),
    "PKCE_REQUIRED": True,
    "OAUTH_DEVICE_VERIFICATION_URI": BASE_URL + "/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": BASE_URL + "/o/device/?user_code={user_code}",
    "DEVICE_FLOW_INTERVAL": _env_int("INTEROP_DEVICE_INTERVAL", 5),
}
