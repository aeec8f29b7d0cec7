"""A scenario's outcome as a person reads it, and as CI reads it (JUnit XML).

    greenhouse.scenario.toml on greenhouse.toml, from 2026-03-28 05:00 CET
      ok    step 1 (input tank_low on)                          2026-03-28 05:00 CET
      FAIL  step 2 (expect_pin pump)                            2026-03-28 05:00 CET
            expected: pump on
            got:      pump off
            last events:
              interlock_refused interlock=dry-run ...
    FAILED at step 2 of 9 (0.21 s)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree

from edge.scenario.runner import StepResult

MARK = {"ok": "ok  ", "failed": "FAIL", "not run": "--  "}


def words(source: str, results: Sequence[StepResult], seconds: float) -> str:
    lines = [source]
    for r in results:
        lines.append(f"  {MARK[r.status]}  {r.title:<52} {r.at}".rstrip())
        if r.status == "failed":
            lines += [f"        expected: {r.expected}", f"        got:      {r.got}"]
            if r.events:
                lines.append("        last events:")
                lines += [f"          {event}" for event in r.events]
    failed = next((r for r in results if r.status == "failed"), None)
    lines.append(f"FAILED at step {failed.index} of {len(results)} ({seconds:.2f} s)" if failed
                 else f"passed: {len(results)} steps ({seconds:.2f} s)")
    return "\n".join(lines)


def write_junit(path: Path, name: str, results: Sequence[StepResult], seconds: float) -> None:
    """One test suite, one test case per step (a failure with its words, a skipped one for
    each step not run)."""
    failures = sum(r.status == "failed" for r in results)
    suite = ElementTree.Element("testsuite", name=name, tests=str(len(results)),
                                failures=str(failures),
                                skipped=str(sum(r.status == "not run" for r in results)),
                                time=f"{seconds:.3f}")
    for r in results:
        case = ElementTree.SubElement(suite, "testcase", classname=name, name=r.title,
                                      time=f"{r.seconds:.3f}")
        if r.status == "failed":
            failure = ElementTree.SubElement(case, "failure",
                                             message=f"expected {r.expected}, got {r.got}")
            failure.text = "\n".join(r.events)
        elif r.status == "not run":
            ElementTree.SubElement(case, "skipped", message="an earlier step failed")
    ElementTree.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
