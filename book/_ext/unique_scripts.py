"""Drop repeated <script> entries from each page (sphinx-thebe registers its config script twice
under Jupyter Book 1, which makes the browser report ``THEBE_JS_URL has already been declared``)."""


def _unique_scripts(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        # the same inline script can be registered with filename None and with filename ''
        key = (getattr(script, "filename", None) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"][:] = unique  # in place: Sphinx restores the list before the next page


def setup(app):
    # after the handlers that add scripts (MathJax is added per page, at the default priority 500)
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
