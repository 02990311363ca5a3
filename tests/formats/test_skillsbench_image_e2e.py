"""SkillsBench v1.1 task packages end to end under ``--sandbox image``, on a stand-in for
``ubuntu:24.04`` built from Debian's packages (tests/image_kit.build_standin): the Dockerfile's
``apt-get install`` runs offline in the build, the verifier's ``pytest --ctrf`` runs on the image
with ``BENCHFLOW_SKIP_VERIFIER_DEPS=1``, and the reward lands in the arm's workspace.

Opt-in (``SKILLAB_IMAGE_TESTS=1``): building the stand-in takes about 3 minutes and reaches the
host's Debian mirror and PyPI once; ``SKILLAB_STANDIN_STORE`` keeps it between runs. The five
tasks then take 25-45 s each on 2 cores.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from skillab.cli import main
from skillab.sandbox.image import STORE_ENV

from ..image_kit import STANDIN_STORE_ENV, build_standin, needs_buildah

TASKS = Path(__file__).parent.parent / "skillsbench_v11"
pytestmark = [
    needs_buildah,
    pytest.mark.skipif(os.environ.get("SKILLAB_IMAGE_TESTS") != "1" or shutil.which("mmdebstrap") is None,
                       reason="opt-in: SKILLAB_IMAGE_TESTS=1 (needs mmdebstrap and the Debian mirror)"),
]


@pytest.fixture(scope="module")
def standin(tmp_path_factory) -> Path:
    kept = os.environ.get(STANDIN_STORE_ENV)
    return build_standin(Path(kept) if kept else tmp_path_factory.mktemp("standin"))


@pytest.mark.parametrize("task", ["3d-scan-calc", "weighted-gdp-calc", "ledger-net-total", "ini-port-audit",
                                  "release-notes-json"])
def test_a_v11_task_flips_to_pass_in_its_own_image(standin, tmp_path, monkeypatch, capsys, task):
    monkeypatch.setenv(STORE_ENV, str(standin))
    out = tmp_path / "results.json"
    code = main(["run", str(TASKS / task), "--adapter", "mock", "--sandbox", "image", "--no-cache",
                 "--no-history", "--quiet", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    (record,) = json.loads(out.read_text())["cases"]
    with_skill, without = (record[arm]["extra"]["graders"][0] for arm in ("with_skill", "without_skill"))
    assert record["outcome"] == "flip_to_pass", (with_skill, without)
    assert with_skill["score"] == 1.0 and without["score"] == 0.0
    assert record["with_skill"]["extra"]["sandbox"] == "image"
