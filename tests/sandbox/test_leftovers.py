"""What a run leaves is removed however it is made: trees of any depth, without following a
link, and the folders any user may write to found here."""

import os
from pathlib import Path

import pytest

from loopbench.sandbox.leftovers import remove_tree, shared_folders, sweep
from tests.sandbox.sandboxing import as_root

DEEP = 3000  # past the recursion limit, and past PATH_MAX as a path


def nest(top: Path, depth: int) -> None:
    """Folders ``depth`` deep under ``top``, a file in each tenth, made by relative steps."""
    here = os.getcwd()
    try:
        os.chdir(top)
        for level in range(depth):
            os.mkdir("d")
            os.chdir("d")
            if level % 10 == 0:
                Path("file").write_text("x")
    finally:
        os.chdir(here)


def test_a_tree_deeper_than_any_path_is_removed(tmp_path):
    top = tmp_path / "tree"
    top.mkdir()
    nest(top, DEEP)
    remove_tree(top)
    assert not top.exists()


def test_a_link_in_a_tree_is_removed_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("not the run's")
    top = tmp_path / "tree"
    (top / "a").mkdir(parents=True)
    (top / "a" / "link").symlink_to(outside)
    (top / "file-link").symlink_to(outside / "keep")
    remove_tree(top)
    assert not top.exists()
    assert (outside / "keep").read_text() == "not the run's"


def test_a_folder_made_unreadable_is_removed_too(tmp_path):
    top = tmp_path / "tree"
    (top / "locked" / "inner").mkdir(parents=True)
    (top / "locked" / "inner" / "file").write_text("x")
    (top / "locked").chmod(0o000)
    try:
        remove_tree(top)
    finally:
        if (top / "locked").exists():
            (top / "locked").chmod(0o700)
    assert not top.exists()


def test_what_is_not_there_is_no_error(tmp_path):
    remove_tree(tmp_path / "missing")
    remove_tree(tmp_path / "missing" / "below")


def test_the_shared_folders_are_the_world_writable_ones_each_once():
    found = shared_folders()
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        if os.path.isdir(folder) and os.stat(folder).st_mode & 0o002:
            assert any(os.path.samefile(folder, f) for f in found), folder
    identities = {(os.stat(f).st_dev, os.stat(f).st_ino) for f in found}
    assert len(identities) == len(found)
    assert all(os.stat(f).st_mode & 0o002 for f in found)


def test_the_sweep_removes_a_uids_deep_tree_and_nothing_else(tmp_path):
    if not as_root():
        pytest.skip("the sweep runs as root only, where each run has a uid of its own")
    uid = 64999  # below the uids runs are given, so no run in flight holds it
    top = Path("/tmp", f"loopbench-test-sweep-{os.getpid()}")
    mine = Path("/tmp", f"loopbench-test-sweep-{os.getpid()}-mine")
    top.mkdir()
    mine.write_text("not the uid's")
    try:
        nest(top, DEEP)
        os.chown(top, uid, uid)  # what the sweep looks at: the entry in the shared folder
        sweep(uid)
        assert not top.exists()
        assert mine.read_text() == "not the uid's"
    finally:
        remove_tree(top)
        mine.unlink()


def test_a_tree_moved_while_it_is_removed_is_left_where_it_went(tmp_path, monkeypatch):
    """The removal goes back up by "..": once a folder is not where it was found (another
    run's process moved it), nothing more is removed, so nothing outside the tree is."""
    (tmp_path / "a" / "top" / "child").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    scandir = os.scandir

    def moving_as_it_is_listed(path):  # another process moves the tree as it is read
        if (tmp_path / "a" / "top").exists():
            (tmp_path / "a" / "top").rename(tmp_path / "b" / "top")
        return scandir(path)

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", moving_as_it_is_listed)
        remove_tree(tmp_path / "a" / "top")
    assert (tmp_path / "b" / "top").is_dir()
    assert not (tmp_path / "b" / "top" / "child").exists()
