"""Judge a conformance run against the frozen requirement set and our baseline.

Used by scripts/conformance; standard library only (it runs before anything else is
known to work, and the YAML involved is simple enough for a tiny parser).

    python conformance/check_results.py --results DIR --requirements YAML \
        --expected conformance/expected-failures.yml [--suite-rc N] [--score-all]

Rules:
* A scenario is *scored* unless the requirement file lists it under ``not_scored``
  for the server leg.  With ``--score-all`` those are scored too (the extension
  and pending scenarios the set runs: this project passes them all and keeps it
  so).  Every scenario in the requirement file's ``server`` list must have
  produced results.
* A scored scenario fails if any of its checks has status ``FAILURE``.  WARNING,
  SKIPPED and INFO do not fail it (SHOULD-level checks only warn).
* A failing scenario listed under ``server:`` in the expected-failures file is
  "expected"; a listed scenario that passes is "stale" and fails the run, so the
  list can only shrink.
* A suite exit code other than 0 or 1 (crash, timeout) fails the run.
* ``--only NAME...`` judges just those scenarios (a run of a few ``--scenario``s).
* ``--extension NAME...`` judges extension scenarios outside the requirement set
  (SEP-2640's ``sep-2640-skills-*``) strictly: each must have run, and every one of
  its checks must be SUCCESS or INFO (a WARNING or SKIPPED fails it too); they
  cannot be listed in the expected-failures file.
* ``--without-fixture-tools`` is for a server that is not the conformance fixture
  (``trio-mcp mcp``): a check the suite reports as "Not testable" because the server
  does not list one of the fixture's diagnostic tools is counted and shown, not
  judged. Every other check is judged as usual.

Exit status 0 when the run is acceptable, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

# -o DIR writes DIR/server-<scenario>-<ISO timestamp with ':' and '.' as '-'>/.
_RESULT_DIR = re.compile(
    r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$"
)


def parse_simple_yaml(text: str) -> dict[str, list[Any]]:
    """Parse the YAML subset used by the requirement and baseline files.

    Top-level keys each hold a block list (or ``[]``) whose items are either plain
    scalars (``- name``) or flat mappings (``- scenario: x`` / ``  leg: server``).
    Folded scalars (``note: >-``) are skipped.  Anything else is an error, so a
    format change in the suite is noticed instead of silently misread.
    """
    out: dict[str, list[Any]] = {}
    key: str | None = None
    item: dict[str, str] | None = None
    item_indent = -1
    skip_deeper_than: int | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith("#"):
            continue
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if skip_deeper_than is not None:
            if indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        stripped = line.strip()
        if indent == 0:
            m = re.fullmatch(r"([A-Za-z_][\w-]*):\s*(\[\s*\])?", stripped)
            if not m:
                raise ValueError(f"line {lineno}: expected 'key:' got {raw!r}")
            key = m.group(1)
            out[key] = []
            item = None
            continue
        if key is None:
            raise ValueError(f"line {lineno}: list item outside a key: {raw!r}")
        if stripped.startswith("- "):
            body = stripped[2:].strip()
            item_indent = indent
            m = re.fullmatch(r"([\w-]+):\s*(.*)", body)
            if m:  # first field of a mapping item
                item = {}
                out[key].append(item)
                if _set_field(item, m.group(1), m.group(2)):
                    skip_deeper_than = indent + 2
            else:
                item = None
                out[key].append(_unquote(body))
            continue
        if item is not None and indent > item_indent:
            m = re.fullmatch(r"([\w-]+):\s*(.*)", stripped)
            if not m:
                raise ValueError(f"line {lineno}: expected 'field: value': {raw!r}")
            if _set_field(item, m.group(1), m.group(2)):
                skip_deeper_than = indent
            continue
        raise ValueError(f"line {lineno}: unsupported YAML: {raw!r}")
    return out


def _set_field(item: dict[str, str], name: str, value: str) -> bool:
    """Store one field; return True if it opens a block scalar to skip."""
    value = value.strip()
    if value in (">", ">-", "|", "|-"):
        item[name] = ""
        return True
    item[name] = _unquote(value)
    return False


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def load_results(results_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Map scenario name -> its checks (all runs of it, if there were several)."""
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    for checks_file in sorted(results_dir.glob("*/checks.json")):
        m = _RESULT_DIR.match(checks_file.parent.name)
        if not m:
            continue
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        if not isinstance(checks, list):
            raise ValueError(f"{checks_file}: expected a JSON array of checks")
        by_scenario.setdefault(m.group("scenario"), []).extend(checks)
    return by_scenario


_NEEDS_FIXTURE = re.compile(r"^Not testable: .*diagnostic tool")


def drop_fixture_checks(
    results: dict[str, list[dict[str, Any]]],
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Remove the checks that need the fixture's diagnostic tools; return their ids."""
    kept: dict[str, list[dict[str, Any]]] = {}
    dropped: list[str] = []
    for name, checks in results.items():
        kept[name] = []
        for check in checks:
            if _NEEDS_FIXTURE.match(str(check.get("errorMessage") or "")):
                dropped.append(f"{name}: {check.get('id', '?')}")
            else:
                kept[name].append(check)
    return kept, dropped


def _failures(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c.get("status") == "FAILURE"]


def _describe(check: dict[str, Any]) -> str:
    msg = str(check.get("errorMessage") or check.get("description") or "")
    msg = " ".join(msg.split())
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{check.get('id', '?')}: {msg}" if msg else str(check.get("id", "?"))


def judge(
    results: dict[str, list[dict[str, Any]]],
    requirements: dict[str, list[Any]],
    expected: list[str],
    suite_rc: int | None,
    *,
    score_all: bool = False,
    baseline: str = "conformance/expected-failures.yml",
) -> int:
    """0 when every scored scenario passed or is an expected failure listed in the
    file ``baseline`` (named in every message about it), else 1."""
    required = [s for s in requirements.get("server", []) if isinstance(s, str)]
    not_scored = {
        entry["scenario"]
        for entry in requirements.get("not_scored", [])
        if isinstance(entry, dict)
        and entry.get("leg") == "server"
        and "scenario" in entry
    }
    if score_all:
        not_scored = set()
    problems: list[str] = []

    for name in expected:
        if ":" in name:
            problems.append(
                f"{baseline}: per-check entry {name!r} is not supported;"
                " list whole scenario names"
            )
        elif name in not_scored:
            problems.append(f"{baseline}: {name!r} is not scored; remove it")
        elif name not in required and name not in results:
            problems.append(f"{baseline}: unknown scenario {name!r}")

    for name in required:
        if name not in results:
            problems.append(f"{name}: no results were written (suite crashed?)")

    scored = sorted(set(required) | {s for s in results if s not in not_scored})
    passed: list[str] = []
    failed_unexpected: list[str] = []
    failed_expected: list[str] = []
    stale: list[str] = []
    for name in scored:
        if name not in results:
            continue
        fails = _failures(results[name])
        if not fails:
            passed.append(name)
            if name in expected:
                stale.append(name)
            continue
        if name in expected:
            failed_expected.append(name)
            continue
        failed_unexpected.append(name)
        print(f"  FAIL {name}")
        for check in fails:
            print(f"       - {_describe(check)}")

    if failed_expected:
        print(
            f"  expected failures ({len(failed_expected)}, see {baseline}):"
            f" {', '.join(failed_expected)}"
        )
    for name in stale:
        problems.append(
            f"{name}: passes now but is listed in {baseline}"
            " (stale baseline): remove it from the list"
        )

    unscored_failing = sorted(
        s for s in results if s in not_scored and _failures(results[s])
    )
    if unscored_failing:
        print(
            f"  (not scored, not judged: {len(unscored_failing)} failing:"
            f" {', '.join(unscored_failing)})"
        )

    if suite_rc not in (None, 0, 1):
        problems.append(f"the suite exited with status {suite_rc} (crash or timeout)")

    for problem in problems:
        print(f"  ERROR {problem}")
    n_failed = len(failed_unexpected) + len(failed_expected)
    print(
        f"conformance: {len(passed)} scored scenarios passed, {n_failed} failed"
        f" ({len(failed_expected)} expected)"
    )
    return 1 if failed_unexpected or problems else 0


def judge_extensions(
    results: dict[str, list[dict[str, Any]]], names: list[str], expected: list[str]
) -> int:
    """Every check of each extension scenario passed: 0, else 1 (printing why)."""
    bad = 0
    for name in names:
        checks = results.get(name)
        if name in expected:
            print(
                f"  ERROR expected-failures: extension scenario {name!r} cannot be listed"
            )
            bad += 1
        if not checks:
            print(f"  ERROR {name}: no results were written (not run?)")
            bad += 1
            continue
        failing = [c for c in checks if c.get("status") not in ("SUCCESS", "INFO")]
        if failing:
            bad += 1
            print(f"  FAIL {name}")
            for check in failing:
                print(f"       - {check.get('status')} {_describe(check)}")
        else:
            print(f"  ok   {name}: {len(checks)} checks, every one SUCCESS")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--requirements", type=Path, required=True)
    parser.add_argument("--expected", type=Path, required=True)
    parser.add_argument("--suite-rc", type=int, default=None)
    parser.add_argument("--only", nargs="+", default=None, metavar="SCENARIO")
    parser.add_argument("--without-fixture-tools", action="store_true")
    parser.add_argument("--extension", nargs="+", default=[], metavar="SCENARIO")
    parser.add_argument(
        "--score-all",
        action="store_true",
        help="also score the scenarios the requirement file lists as not scored",
    )
    args = parser.parse_args(argv)

    try:
        requirements = parse_simple_yaml(args.requirements.read_text(encoding="utf-8"))
        baseline = parse_simple_yaml(args.expected.read_text(encoding="utf-8"))
        results = load_results(args.results)
    except (OSError, ValueError) as exc:
        print(f"conformance: cannot judge the run: {exc}")
        return 1
    expected = baseline.get("server", [])
    if not all(isinstance(e, str) for e in expected):
        print(f"conformance: {args.expected}: 'server' must be a list of names")
        return 1
    if not requirements.get("server"):
        print(f"conformance: no server scenarios found in {args.requirements}")
        return 1
    extensions = {k: results.pop(k) for k in args.extension if k in results}
    extension_rc = judge_extensions(extensions, args.extension, expected)
    if args.only:
        unknown = sorted(set(args.only) - set(requirements["server"]))
        if unknown:
            print(f"conformance: --only names unknown scenarios: {', '.join(unknown)}")
            return 1
        requirements["server"] = [s for s in requirements["server"] if s in args.only]
        results = {k: v for k, v in results.items() if k in args.only}
        expected = [e for e in expected if e in args.only]
    if args.without_fixture_tools:
        results, dropped = drop_fixture_checks(results)
        print(
            f"  not judged ({len(dropped)} checks need the fixture's diagnostic tools):"
            f" {', '.join(dropped) or 'none'}"
        )
    rc = judge(
        results,
        requirements,
        expected,
        args.suite_rc,
        score_all=args.score_all,
        baseline=str(args.expected),
    )
    return rc or extension_rc


if __name__ == "__main__":
    sys.exit(main())
