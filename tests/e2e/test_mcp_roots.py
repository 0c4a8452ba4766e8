"""Several roots and the MCP roots protocol through ``corral serve``.

``corral serve web api``: every path begins with a root's name.  A client
that declares ``roots`` narrows that to the intersection with its own
directories (never wider): a client directory below a root is opened beneath
it; one that shares nothing leaves no root.  Calls that arrive before the
client's first answer wait for it; ``notifications/roots/list_changed`` is
followed.  Driven by both SDK lines and on the wire.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .helpers import SDKS, envelope_of, serve_roots_command

BOUND = 5.0


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("roots")
    web, api, spaced = base / "web", base / "api", base / "my dir"
    (web / "src").mkdir(parents=True)
    (api / "pkg").mkdir(parents=True)
    spaced.mkdir()
    (web / "index.html").write_text("<p>web</p>\n")
    (api / "pkg" / "main.py").write_text("print('api')\n")
    (api / "only_api.txt").write_text("api only\n")
    (spaced / "s.txt").write_text("spaced\n")
    (base / "elsewhere").mkdir()
    return {"web": web, "api": api, "spaced": spaced, "base": base}


@pytest.fixture(scope="module")
def command(dirs) -> list[str]:
    return serve_roots_command([dirs["web"], dirs["api"], dirs["spaced"]])


@pytest.fixture(params=SDKS)
def sdk(request) -> str:
    return request.param


def test_several_roots_without_the_protocol(command, sdk, make_session):
    session = make_session(command, sdk=sdk)
    assert "web, api, my dir" in session.instructions
    assert envelope_of(session.call("read_file", {"path": "api/pkg/main.py"}))["path"] == \
        "api/pkg/main.py"
    assert envelope_of(session.call("read_file", {"path": "my dir/s.txt"}))["ok"] is True
    listed = session.list_tools()
    assert all("several roots" in tool["description"] for tool in listed)
    cross = envelope_of(session.call("move_file", {"source": "web/index.html",
                                                   "destination": "api/index.html"}))
    assert cross["code"] == "UNSUPPORTED" and cross["details"]["kind"] == "cross_root"


def test_client_roots_narrow_to_the_intersection(command, dirs, sdk, make_session):
    session = make_session(command, sdk=sdk, roots=[_uri(dirs["web"])])
    # one root left: paths are plain again, and nothing of api can be reached
    assert envelope_of(session.call("read_file", {"path": "index.html"}))["ok"] is True
    assert envelope_of(session.call("read_file", {"path": "api/pkg/main.py"}))["code"] == \
        "NOT_FOUND"
    assert envelope_of(session.call(
        "read_file", {"path": str(dirs["api"] / "pkg" / "main.py")}))["code"] == "OUTSIDE_ROOT"
    assert session.request("roots_asked")["count"] == 1


def test_list_changed_is_followed(command, dirs, sdk, make_session):
    session = make_session(command, sdk=sdk, roots=[_uri(dirs["web"])])
    assert envelope_of(session.call("read_file", {"path": "index.html"}))["ok"] is True
    session.request("set_roots", roots=[_uri(dirs["web"]), _uri(dirs["api"])])
    deadline = time.monotonic() + BOUND
    while True:  # the server asks again, then uses both
        envelope = envelope_of(session.call("read_file", {"path": "api/pkg/main.py"}))
        if envelope["ok"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert envelope["ok"] is True and envelope["path"] == "api/pkg/main.py"
    assert session.request("roots_asked")["count"] == 2


def test_a_client_root_below_a_root_is_the_boundary(command, dirs, sdk, make_session):
    session = make_session(command, sdk=sdk, roots=[_uri(dirs["api"] / "pkg")])
    assert envelope_of(session.call("read_file", {"path": "main.py"}))["ok"] is True
    climbed = envelope_of(session.call("read_file", {"path": "../only_api.txt"}))
    assert climbed["code"] == "OUTSIDE_ROOT"


def test_client_roots_that_share_nothing_leave_no_root(command, dirs, sdk, make_session):
    session = make_session(command, sdk=sdk, roots=[_uri(dirs["base"] / "elsewhere")])
    refused = envelope_of(session.call("read_file", {"path": "web/index.html"}))
    assert refused["code"] == "DENIED" and refused["details"]["kind"] == "no_roots"


def test_an_empty_root_list_narrows_nothing(command, sdk, make_session):
    session = make_session(command, sdk=sdk, roots=[])
    assert envelope_of(session.call("read_file", {"path": "api/pkg/main.py"}))["ok"] is True


# -- on the wire --------------------------------------------------------------------

def _start(raw) -> dict:
    raw.initialize(capabilities={"roots": {"listChanged": True}})
    ask = raw.receive(BOUND)
    assert ask["method"] == "roots/list" and "id" in ask, ask
    return ask


def test_calls_wait_for_the_first_roots_answer(command, dirs, make_raw):
    raw = make_raw(command)
    ask = _start(raw)
    raw.send({"jsonrpc": "2.0", "id": "early", "method": "tools/call",
              "params": {"name": "read_file", "arguments": {"path": "only_api.txt"}}})
    assert raw.request("ping")["result"] == {}  # answered; the call is held meanwhile
    raw.send({"jsonrpc": "2.0", "id": ask["id"],
              "result": {"roots": [{"uri": _uri(dirs["api"]), "name": "API"}]}})
    answer = raw.answer("early")
    assert answer["result"]["structuredContent"]["ok"] is True  # one root: api


def test_an_error_answer_keeps_the_command_line(command, make_raw):
    raw = make_raw(command)
    ask = _start(raw)
    raw.send({"jsonrpc": "2.0", "id": ask["id"],
              "error": {"code": -32601, "message": "Roots not supported"}})
    answer = raw.request("tools/call", {"name": "read_file",
                                        "arguments": {"path": "web/index.html"}})
    assert answer["result"]["structuredContent"]["ok"] is True


def test_uris_are_decoded_and_others_ignored(command, dirs, make_raw):
    raw = make_raw(command)
    ask = _start(raw)
    raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [
        {"uri": _uri(dirs["spaced"])},  # file:///.../my%20dir
        {"uri": "https://example.invalid/web"}, {"uri": "file://otherhost/x"},
        {"uri": "file:relative"}, {"name": "no uri"}, "not an object"]}})
    answer = raw.request("tools/call", {"name": "read_file", "arguments": {"path": "s.txt"}})
    assert answer["result"]["structuredContent"]["ok"] is True


@pytest.mark.parametrize("result", [
    {"roots": [{"uri": 5}]},
    {"roots": [{"name": "no uri"}, "not an object", {"uri": ["file:///"]}]},
    {"roots": "file:///"},
    {"roots": {"uri": "file:///"}},
    {},
    [], "roots", None, 5, {"roots": None},
], ids=["uri-not-text", "no-entry-readable", "roots-text", "roots-object", "no-roots",
        "result-list", "result-text", "result-null", "result-number", "roots-null"])
def test_a_roots_answer_naming_no_directory_it_can_read_leaves_no_root(command, make_raw,
                                                                      result):
    # an answer the client meant as its roots, none of which corral can read,
    # narrows to nothing (as a list of https:// URIs does), never to every root
    raw = make_raw(command)
    ask = _start(raw)
    raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": result})
    answer = raw.request("tools/call", {"name": "read_file",
                                        "arguments": {"path": "web/index.html"}})
    refused = answer["result"]["structuredContent"]
    assert refused["ok"] is False and refused["details"]["kind"] == "no_roots", refused


def test_changed_roots_change_the_descriptions_and_say_so(command, dirs, make_raw):
    raw = make_raw(command)
    ask = _start(raw)
    raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": _uri(dirs["web"])}]}})
    assert raw.request("ping")["result"] == {}
    changed = [n for n in raw.notifications
               if n.get("method") == "notifications/tools/list_changed"]
    assert changed, raw.notifications
    tools = raw.request("tools/list")["result"]["tools"]
    assert not any("several roots" in tool["description"] for tool in tools)


def _asked_again(raw) -> dict:
    """The server's next ``roots/list``, after the client says its roots changed."""
    raw.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    deadline = time.monotonic() + BOUND
    while True:
        message = raw.receive(max(0.01, deadline - time.monotonic()))
        if message.get("method") == "roots/list" and "id" in message:
            return message
        raw.notifications.append(message)


def _malformed(web: Path) -> dict[str, list]:
    """Roots answers none of whose entries names a directory corral can
    read, by what is wrong with them."""
    path = str(web.resolve())
    return {
        "entries_not_objects": [[_uri(web)], [5], [None], [True], [[{"uri": _uri(web)}]],
                                [path]],
        "uri_not_text": [[{"uri": 5}], [{"uri": None}], [{"uri": True}], [{"uri": [_uri(web)]}],
                         [{"uri": {"path": path}}], [{"url": _uri(web)}], [{"path": path}]],
        "other_schemes": [[{"uri": f"https://example.invalid{path}"}],
                          [{"uri": f"http://localhost{path}"}], [{"uri": f"ftp://x{path}"}],
                          [{"uri": f"vscode-remote://ssh-remote+h{path}"}],
                          [{"uri": "data:,x"}], [{"uri": f"urn:x:{path}"}],
                          [{"uri": path}], [{"uri": f"file{path}"}]],
        "file_with_a_host": [[{"uri": f"file://otherhost{path}"}],
                             [{"uri": f"file://user@localhost{path}"}],
                             [{"uri": f"file://localhost:8080{path}"}],
                             [{"uri": f"file://[::1]{path}"}], [{"uri": f"file://LOCALHOST2{path}"}],
                             [{"uri": f"file://127.0.0.1{path}"}]],
        "empty_or_partial": [[{"uri": ""}], [{"uri": "file:"}], [{"uri": "file://"}],
                             [{"uri": "file:relative"}], [{"uri": "file:./web"}],
                             [{"uri": f"file://{path}%00x"}], [{"uri": "file://%zz"}],
                             [{"uri": "file://[::1"}]],
    }


@pytest.mark.parametrize("what", ["entries_not_objects", "uri_not_text", "other_schemes",
                                  "file_with_a_host", "empty_or_partial"])
def test_every_malformed_roots_answer_leaves_no_root(command, dirs, make_raw, what):
    """Each malformed answer in turn (the client saying its roots changed
    between them), after one naming ``web``: none of them may leave a root
    open, neither every command-line root nor the one before."""
    raw = make_raw(command)
    ask = _start(raw)
    for roots in _malformed(dirs["web"])[what]:
        raw.send({"jsonrpc": "2.0", "id": ask["id"],
                  "result": {"roots": [{"uri": _uri(dirs["web"])}]}})
        assert raw.request("tools/call", {"name": "read_file", "arguments": {
            "path": "index.html"}})["result"]["structuredContent"]["ok"] is True
        ask = _asked_again(raw)
        raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}})
        for path in ("index.html", "web/index.html", "api/only_api.txt"):
            refused = raw.request("tools/call", {"name": "read_file",
                                                 "arguments": {"path": path}})
            envelope = refused["result"]["structuredContent"]
            assert envelope["ok"] is False and envelope["details"]["kind"] == "no_roots", \
                (roots, path, envelope)
        ask = _asked_again(raw)


def test_one_good_root_among_many_bad_is_the_only_root(command, dirs, make_raw):
    raw = make_raw(command)
    ask = _start(raw)
    bad = [entry for forms in _malformed(dirs["web"]).values() for roots in forms
           for entry in roots]
    raw.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [
        *bad[:len(bad) // 2], {"uri": _uri(dirs["web"])}, *bad[len(bad) // 2:]]}})
    # one root left (web): paths are plain, and api cannot be reached
    assert raw.request("tools/call", {"name": "read_file", "arguments": {
        "path": "index.html"}})["result"]["structuredContent"]["ok"] is True
    for path in ("api/only_api.txt", "only_api.txt", str(dirs["api"] / "only_api.txt")):
        envelope = raw.request("tools/call", {"name": "read_file", "arguments": {
            "path": path}})["result"]["structuredContent"]
        assert envelope["ok"] is False, (path, envelope)
