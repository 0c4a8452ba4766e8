"""The several-roots front end (the MCP roots protocol) decides on what was
resolved (principle 1), not on a host path read before.

:meth:`Workspace.narrowed` decides where a client's directory lies inside a
root from the host path (``os.path.realpath``), then opens that spelling
through the Root, which follows an in-root symlink found there.  If the
directory is swapped for a link to ``.git`` in between, a narrowing that
trusted the host path would make the narrowed root ``.git`` while its
policy is decided beneath ``sub``: hooks could be written.  The swap is
made deterministic here: it happens inside the Root's own open of ``sub``
(a FaultBackend hook), after the host path was read.
"""

from __future__ import annotations


import pytest

from corral.contained import Root, available_backends, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox, Workspace
from corral.tools._runtime.workspace import policy_beneath

# every backend, with and without the openat2 fast path (as tests/conftest.py's)
BACKEND_CONFIGS = [(name, fast) for name in available_backends()
                   for fast in ((True, False) if backend_by_name(name).has_openat2 else (False,))]
BACKEND_IDS = [f"{name}-{'openat2' if fast else 'walk'}" for name, fast in BACKEND_CONFIGS]


@pytest.mark.parametrize("config", BACKEND_CONFIGS, ids=BACKEND_IDS)
def test_client_root_swapped_for_a_link_to_git_while_narrowing(tmp_path, config):
    name, fast = config
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "lnk").symlink_to(".git")
    swapper = Root(str(tmp_path))

    def swap() -> None:  # "sub" becomes the link to .git, atomically
        swapper.rename("sub", "lnk", exchange=True)

    hook = [Fault("open_at", None, name="sub", hook=swap),
            Fault("openat2", None, name="sub", hook=swap)]
    backend = FaultBackend(backend_by_name(name), *hook)
    parent = Toolbox(Root(str(tmp_path), backend=backend, fast_path=fast))

    def opener(root: Root, box: Toolbox, base: str) -> Toolbox:
        return Toolbox(root, policy=policy_beneath(box.policy, base))

    try:
        narrowed = Workspace({"ws": parent}, opener=opener).narrowed([str(tmp_path / "sub")])
        for root_name in narrowed.roots:
            narrowed.toolbox(root_name).call(
                "write_file", {"path": "hooks/pre-commit", "content": "#!/bin/sh\necho x\n"})
        narrowed.close()
    finally:
        parent.close()
        parent.root.close()
        swapper.close()
    assert any(f.fired for f in hook), "the swap never happened: the test proves nothing"
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists(), \
        "a hook was planted through a narrowed client root"
