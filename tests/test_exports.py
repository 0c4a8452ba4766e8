"""The public API, pinned: what ``corral``, ``corral.contained``,
``corral.tools``, ``corral.hosts`` and ``corral.integrations`` export, and that every exported
class and function names the public module it is imported from (never a
private ``_x`` module).

Adding a public name is one line in :data:`PUBLIC` (and the name in the
package's ``__all__``); a name that appears or vanishes without that fails
here, so the API changes only on purpose.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

# module -> every name in its __all__, one per line
PUBLIC: dict[str, set[str]] = {
    "corral": {
        "Root",
        "ContainedError",
        "EscapeError",
        "InvalidPathError",
        "RootVanishedError",
        "SpecialFileError",
        "SymlinkError",
        "__version__",
    },
    "corral.contained": {
        "Root",
        "Handle",
        "Target",
        "Opened",
        "HeldParent",
        "TEMP_SUFFIX",
        "is_temp_name",
        "without_temp_names",
        "StaleError",
        "DirEntry",
        "SizedListing",
        "PathError",
        "ContainedError",
        "EscapeError",
        "InvalidPathError",
        "RootVanishedError",
        "SpecialFileError",
        "SymlinkError",
        "HardLinkError",
        "Backend",
        "FileScan",
        "ScanStatus",
        "TextWindow",
        "OsBackend",
        "available_backends",
        "backend_by_name",
        "backend_report",
        "default_backend",
        "fd_capabilities",
        "MAX_SYMLINKS",
        "RootPath",
        "Extraction",
        "ExtractReason",
        "ExtractLimits",
        "ExtractProgress",
        "ExtractStop",
        "Landed",
        "Refused",
        "TargetChangedError",
        "DirEntries",
        "ST_NOSYMFOLLOW",
        "under_pyfakefs",
        "Tree",
        "TreeStats",
        "TreeVisitor",
        "open_entry",
        "adopt_entry",
        "batches_natively",
    },
    "corral.tools": {
        "Toolbox",
        "Workspace",
        "Limits",
        "Code",
        "Refusal",
        "Denied",
        "Request",
        "ReadRequest",
        "WriteRequest",
        "EditRequest",
        "ListRequest",
        "GlobRequest",
        "GrepRequest",
        "MoveRequest",
        "DeleteRequest",
        "InfoRequest",
        "MakeDirectoryRequest",
        "TreeRequest",
        "ToolSpec",
        "TOOL_NAMES",
        "Authorizer",
        "tool_definitions",
        "strict_schema",
        "CancelToken",  # stops a call (tools)
        "Progress",
        "Kind",  # what a path names (tools)
        "Suggests",
        "Policy",  # the host's path rules (tools)
        "definition",
        "offered_specs",
        "Opener",
        "Editing",
        "v4a_patch",
        "engine_report",
    },
    "corral.hosts": {
        "FORMATS",
        "HostFormat",
        "envelope_text",
        "envelope_json",
        "json_string",
        "json_utf8",
        "published_schema",
        "strict_schema",
        "file_uri_path",
        "root_names",
        "output_schema",
        "render",
        "render_with_json",
        "render_escaped",
        "render_refusal",
        "one_line",
        "shown_name",
        "short_digest",
        "SHORT_DIGEST_CHARS",
    },
    "corral.integrations": {
        "openai_agents_tools",
        "pydantic_ai_toolset",
        "langchain_tools",
        "anthropic_tools",
        "anthropic_tool_results",
        "run_anthropic",
        "text_editor_tool",
        "apply_patch_tool",
    },
}


def _exported(module_name: str) -> list[tuple[str, object]]:
    module = importlib.import_module(module_name)
    return [(name, getattr(module, name)) for name in module.__all__]


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_all_is_the_pinned_api(module_name):
    module = importlib.import_module(module_name)
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice in __all__"
    assert set(module.__all__) == PUBLIC[module_name]
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name} is in __all__ but not defined"


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_every_exported_object_names_a_public_module(module_name):
    for name, obj in _exported(module_name):
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        home = obj.__module__
        assert not any(part.startswith("_") for part in home.split(".")), (
            f"{module_name}.{name}.__module__ is {home!r}, a private module")
        # the module it names really has it, under the same name
        assert getattr(importlib.import_module(home), obj.__qualname__) is obj


def test_corral_reexports_are_the_same_objects():
    import corral
    import corral.contained

    for name in PUBLIC["corral"] - {"__version__"}:
        assert getattr(corral, name) is getattr(corral.contained, name)


def test_version_is_single_sourced():
    from importlib import metadata

    import corral

    assert metadata.version("corral") == corral.__version__


def test_importing_corral_imports_no_framework():
    # corral.integrations and every front end import their framework only
    # when an adapter is asked for: a plain import pulls in none of them
    code = ("import sys, corral, corral.tools, corral.integrations, corral.cli\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
            "{'mcp', 'pydantic', 'pydantic_ai', 'agents', 'langchain_core', 'anthropic', "
            "'openai', 'anyio', 'httpx'})\n"
            "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# RootPath is pathlib.Path inside a root: the public names of pathlib.Path of
# the newest Python (3.14), each present, plus the Root it is beneath
NEWEST_PATH_API = {
    "absolute", "anchor", "as_posix", "as_uri", "chmod", "copy", "copy_into", "cwd", "drive",
    "exists", "expanduser", "from_uri", "full_match", "glob", "group", "hardlink_to", "home",
    "info", "is_absolute", "is_block_device", "is_char_device", "is_dir", "is_fifo", "is_file",
    "is_junction", "is_mount", "is_relative_to", "is_reserved", "is_socket", "is_symlink",
    "iterdir", "joinpath", "lchmod", "lstat", "match", "mkdir", "move", "move_into", "name",
    "open", "owner", "parent", "parents", "parser", "parts", "read_bytes", "read_text",
    "readlink", "relative_to", "rename", "replace", "resolve", "rglob", "rmdir", "root",
    "samefile", "stat", "stem", "suffix", "suffixes", "symlink_to", "touch", "unlink", "walk",
    "with_name", "with_segments", "with_stem", "with_suffix", "write_bytes", "write_text",
}
ROOTPATH_EXTRA = {"corral_root"}
# what pathlib.Path has and RootPath deliberately lacks: __fspath__ (a host
# path), and what newer pythons removed (link_to, the context manager)
ROOTPATH_ABSENT = {"__fspath__", "link_to", "__enter__", "__exit__"}


def test_rootpath_api_is_pathlibs():
    from pathlib import Path

    from corral.contained import RootPath

    public = {n for n in dir(RootPath) if not n.startswith("_")}
    assert public == NEWEST_PATH_API | ROOTPATH_EXTRA
    running = {n for n in dir(Path) if not n.startswith("_")} | {
        n for n in ("__fspath__", "__enter__", "__exit__", "__truediv__", "__rtruediv__",
                    "__bytes__", "__lt__", "__le__", "__gt__", "__ge__") if hasattr(Path, n)}
    assert running - set(dir(RootPath)) <= ROOTPATH_ABSENT
    assert not hasattr(RootPath, "__fspath__")
