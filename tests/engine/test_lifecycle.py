"""Unit ids and how a revision relates new units to stored ones."""
import pytest

from asmr.units.ids import content_hash, doc_id_from_path, parse_unit_id, unit_id, unit_key
from asmr.units.lifecycle import assign_keys, plan_revision
from asmr.units.model import InputError


def test_unit_ids_are_addresses():
    uid = unit_id("kb", "guide.setup", unit_key("paragraph", "Hello."))
    assert uid.startswith("memo://kb/guide.setup/") and len(uid.rsplit("/", 1)[1]) == 12
    assert parse_unit_id(uid) == ("kb", "guide.setup", uid.rsplit("/", 1)[1])
    assert unit_key("paragraph", "Hello.") != unit_key("heading", "Hello.")
    for bad in ["http://kb/a/0123456789ab", "memo://kb/a/b/0123456789ab", "memo://kb/../0123456789ab",
                "memo://kb/a/xyz", "memo://k b/a/0123456789ab"]:
        with pytest.raises(InputError):
            parse_unit_id(bad)


def test_doc_ids_from_paths_refuse_tricks():
    assert doc_id_from_path("guides/setup.md") == "guides.setup"
    assert doc_id_from_path("./a b/c?.txt") == "a_b.c_"  # ASCII keeps the ids memories were built with
    for bad in ["../etc/passwd", "a/../../b.md", "", "."]:
        with pytest.raises(InputError):
            doc_id_from_path(bad)


def test_doc_ids_of_names_outside_the_alphabet_never_collide():
    """Names with characters outside ASCII keep a readable ASCII form and a hash of the name as written: distinct names,
    distinct ids, every one a valid address part (the citation automaton reads ASCII ids)."""
    assert doc_id_from_path("u/文件.md") == "u.WenJian_5972770a"
    assert doc_id_from_path("café.md") == "cafe_2d03c5d6"
    names = ["文件.md", "名字.md", "a b.md", "a?c.md", "café.md", "cafe\u0301.md", "Café.md", "cafe.md",
             "a.b.md", "-x.md", "v1/x.md", "ünï/résumé.md", "uni/resume.md", "文件/名字.md"]
    ids = [doc_id_from_path(n) for n in names]
    assert len(set(ids)) == len(names), ids
    for i in ids:
        parse_unit_id(unit_id("kb", i, unit_key("paragraph", "x")))


def test_repeated_text_gets_distinct_keys_and_retired_keys_are_not_reused():
    hashes = [content_hash("paragraph", t) for t in ["Same.", "Same.", "Other."]]
    keys = assign_keys(hashes, set())
    assert len(set(keys)) == 3 and keys[1] == keys[0] + "-1"
    assert keys[0] == unit_key("paragraph", "Same.") and keys[1] == unit_key("paragraph", "Same.", 1)
    again = assign_keys(hashes[:1], {keys[0]})
    assert again[0] != keys[0]


def _ids(kind_contents):
    return [f"memo://kb/d/{k}" for k in assign_keys([content_hash(k, c) for k, c in kind_contents], set())]


def test_plan_revision_keeps_supersedes_deprecates_and_adds():
    old_units = [("heading", "Setup"), ("paragraph", "The server listens on port 8080 by default."),
                 ("paragraph", "Logs go to /var/log/app."), ("paragraph", "Contact the admin team.")]
    new_units = [("heading", "Setup"), ("paragraph", "The server listens on port 9090 by default."),
                 ("paragraph", "Backups run nightly at 02:00 UTC."), ("paragraph", "Contact the admin team.")]
    old_ids, new_ids = _ids(old_units), _ids(new_units)
    old = [(i, k, c) for i, (k, c) in zip(old_ids, old_units)]
    rev = plan_revision(old, new_ids, new_units)
    assert rev.kept == [(0, old_ids[0]), (3, old_ids[3])]
    assert rev.superseded == [(old_ids[1], 1)]
    assert rev.deprecated == [old_ids[2]]
    assert rev.added == [2]
    assert rev.changed


def test_moved_unit_keeps_its_id_and_no_change_is_no_change():
    units = [("paragraph", "Alpha one two."), ("paragraph", "Beta three four."), ("paragraph", "Gamma.")]
    ids = _ids(units)
    old = [(i, k, c) for i, (k, c) in zip(ids, units)]
    moved = [units[2], units[0], units[1]]
    rev = plan_revision(old, _ids(moved), moved)
    assert sorted(uid for _, uid in rev.kept) == sorted(ids)
    assert not rev.changed
    assert not plan_revision(old, ids, units).changed
