/// The look of the few pages a person sees in a login — the dev issuer's sign-in and device
/// pages, and the agent's "login finished" page — shared so the demo, many people's first
/// impression, reads as one thing. Inline only: these pages load nothing from anywhere (no
/// scripts, fonts or stylesheets), so they work offline and leak no request to a third party.
public enum PageStyle {
    /// The `<head>` content after `<title>`: a viewport for phones (a device code is often
    /// approved on one) and the stylesheet.
    public static let head = """
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>\(css)</style>
        """

    /// A card in the middle of the page; errors in red with `role="alert"`; light and dark.
    static let css = """
        :root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#f6f8fa;--card:#fff;--line:#d1d9e0;\
        --accent:#0969da;--bad:#d1242f;--bad-bg:#ffebe9;--good:#1a7f37}\
        @media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--card:#151b23;\
        --line:#3d444d;--accent:#4493f8;--bad:#f85149;--bad-bg:#25171c;--good:#3fb950}}\
        *{box-sizing:border-box}\
        body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1rem;\
        background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}\
        main{width:100%;max-width:26rem;background:var(--card);border:1px solid var(--line);border-radius:12px;\
        padding:1.5rem 1.75rem;box-shadow:0 8px 24px rgba(0,0,0,.08)}\
        h1{font-size:1.4rem;margin:0 0 1rem}p{margin:.6rem 0}.muted{color:var(--muted);font-size:.9rem}\
        code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--bg);padding:.1em .35em;border-radius:4px}\
        label{display:block;font-weight:600;margin:.9rem 0 .3rem}\
        input{width:100%;font:inherit;padding:.55rem .7rem;border:1px solid var(--line);border-radius:6px;\
        background:var(--card);color:var(--fg)}\
        input:focus{outline:2px solid var(--accent);outline-offset:1px}\
        input.code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.15em;text-transform:uppercase}\
        .actions{display:flex;gap:.6rem;margin-top:1.3rem}\
        button{flex:1;font:inherit;font-weight:600;padding:.6rem;border-radius:6px;border:1px solid var(--line);\
        background:var(--card);color:var(--fg);cursor:pointer}\
        button.primary{background:var(--accent);border-color:var(--accent);color:#fff}\
        .error{color:var(--bad);background:var(--bad-bg);border:1px solid var(--bad);border-radius:6px;padding:.5rem .75rem}\
        .status{font-size:2.2rem;line-height:1;margin:0 0 .5rem}.ok{color:var(--good)}.failed{color:var(--bad)}
        """
}
