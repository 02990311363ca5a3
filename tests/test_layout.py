"""``tests/`` mirrors the package layout (``tests/layout.py``): every test module sits under the
package it tests, and ``python -m tests.layout --apply`` moves them there without breaking one."""

from __future__ import annotations

import textwrap

from . import layout


def test_every_test_module_sits_under_the_package_it_tests():
    misplaced = [f"{p.path.relative_to(layout.ROOT)} belongs in {p.target.parent.relative_to(layout.ROOT)}/ ({p.why})"
                 for p in layout.pending()]
    assert not misplaced, "run `python -m tests.layout --apply`, or add to OVERRIDES:\n" + "\n".join(misplaced)


def test_every_placement_names_a_package_and_every_override_a_test_module():
    known = set(layout.packages())
    placed = layout.placements()
    assert {p.package for p in placed} - {None} <= known
    assert set(layout.OVERRIDES) <= {p.path.stem for p in placed}
    assert {p.path.stem for p in placed if p.package is None} >= {"test_architecture", "test_layout", "test_secrets"}


def test_a_moved_module_reaches_helpers_one_level_up_and_a_moved_neighbour_where_it_went():
    text = textwrap.dedent("""\
        from . import import_graph
        from .fakes.model_server import FakeModelServer
        from .test_neighbour import (commit_all,
                                     git)
        from .test_other import KEY


        def late():
            from .skillgen import make_skill
        """)
    # Made-up names: the real ones would be rewritten here too when the layout is applied.
    renamed = {"tests.test_moved": "tests.engine.test_moved", "tests.test_neighbour": "tests.engine.test_neighbour",
               "tests.test_other": "tests.agents.test_other"}
    assert layout._relative_imports(text, "tests.test_moved", "tests.engine.test_moved", renamed) == \
        textwrap.dedent("""\
        from .. import import_graph
        from ..fakes.model_server import FakeModelServer
        from .test_neighbour import (commit_all,
                                     git)
        from ..agents.test_other import KEY


        def late():
            from ..skillgen import make_skill
        """)


def test_paths_from_file_go_one_level_up_and_a_plugins_source_text_is_left_alone():
    text = textwrap.dedent("""\
        ROOT = Path(__file__).resolve().parent.parent
        EXAMPLE = Path(__file__).resolve().parents[1] / "examples"
        NODE = Path(__file__).parent / ".node"
        HELPER = str(Path(__file__).with_name("harbor_models.py"))
        TEXT = Path(__file__).with_name("data.txt").read_text()
        PLUGIN = '''log = Path(__file__).with_name("commands.log")'''
        here = os.path.dirname(__file__)
        """)
    rewritten, unhandled = layout._file_paths(text)
    assert rewritten == textwrap.dedent("""\
        ROOT = Path(__file__).resolve().parent.parent.parent
        EXAMPLE = Path(__file__).resolve().parents[2] / "examples"
        NODE = Path(__file__).parent.parent / ".node"
        HELPER = str(Path(__file__).parent.parent / "harbor_models.py")
        TEXT = (Path(__file__).parent.parent / "data.txt").read_text()
        PLUGIN = '''log = Path(__file__).with_name("commands.log")'''
        here = os.path.dirname(__file__)
        """)
    assert unhandled == [7]  # named for a look by hand
