"""The srtui Textual app. Only this package (and srtui.cli) may import Textual."""

from __future__ import annotations

import os


def run_app(
    workspace_path: str | os.PathLike[str] | None = None, *, theme: str | None = None, ascii: bool | None = None
) -> int:
    """Open the app on a workspace (``--workspace``, ``$SRTUI_WORKSPACE`` or ./srtui-workspace)."""
    from srtui import warnings_policy
    from srtui.app.app import SrtuiApp
    from srtui.views import resolve_workspace

    warnings_policy.install()  # a dependency's warning on stderr would draw over the screen

    app = SrtuiApp(resolve_workspace(workspace_path), theme=theme, ascii=ascii)
    app.run()
    return app.return_code or 0
