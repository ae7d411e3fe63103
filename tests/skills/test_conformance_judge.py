"""conformance/check_results.py judges the SEP-2640 scenarios strictly (--extension):
every check SUCCESS, so a WARNING, a SKIPPED or a missing run fails the build."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "sep-2640-skills-directory"


def judge_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_results", ROOT / "conformance" / "check_results.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(tmp_path: Path, statuses: list[str] | None, *, baselined: bool = False) -> int:
    """The verdict on one extension scenario whose checks had ``statuses`` (None: no run)."""
    if statuses is not None:
        out = tmp_path / f"server-{SCENARIO}-2026-12-04T11-31-29-094Z"
        out.mkdir(parents=True)
        checks = [{"id": f"c{n}", "status": s} for n, s in enumerate(statuses)]
        (out / "checks.json").write_text(json.dumps(checks))
    module = judge_module()
    results = module.load_results(tmp_path)
    return int(
        module.judge_extensions(results, [SCENARIO], [SCENARIO] if baselined else [])
    )


@pytest.mark.parametrize(
    ("statuses", "rc"),
    [
        (["SUCCESS", "SUCCESS", "INFO"], 0),
        (["SUCCESS", "WARNING"], 1),
        (["SUCCESS", "SKIPPED"], 1),
        (["FAILURE"], 1),
        (None, 1),
    ],
)
def test_an_extension_scenario_passes_only_when_every_check_does(
    tmp_path: Path, statuses: list[str] | None, rc: int
) -> None:
    assert rc == run(tmp_path, statuses)


def test_an_extension_scenario_cannot_be_baselined(tmp_path: Path) -> None:
    assert 1 == run(tmp_path, ["SUCCESS"], baselined=True)


def test_the_judge_names_the_baseline_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stale or expected entry is reported against the file in use (the 2025-11-25
    set has its own), not always expected-failures.yml."""
    for name, status in (("ping", "SUCCESS"), ("tools-list", "FAILURE")):
        out = tmp_path / "run" / f"server-{name}-2026-12-04T11-31-29-094Z"
        out.mkdir(parents=True)
        (out / "checks.json").write_text(json.dumps([{"id": "c", "status": status}]))
    requirements = tmp_path / "requirements.yaml"
    requirements.write_text("server:\n  - ping\n  - tools-list\n")
    baseline = tmp_path / "expected-failures.2025-11-25.yml"
    baseline.write_text("server:\n  - ping\n  - tools-list\n")

    rc = judge_module().main(
        [
            "--results",
            str(tmp_path / "run"),
            "--requirements",
            str(requirements),
            "--expected",
            str(baseline),
        ]
    )

    printed = capsys.readouterr().out
    assert 1 == rc  # ping is a stale entry
    assert f"see {baseline}" in printed
    assert f"ping: passes now but is listed in {baseline}" in printed
    assert "expected-failures.yml" not in printed.replace(baseline.name, "")
