#!/usr/bin/env python3
"""Prints one line per test case of a CTest JUnit file (ctest --output-junit): seconds, status, name,
slowest first, then the sum. scripts/test.sh puts it in its stage table."""
import sys
import xml.etree.ElementTree as ET


def main(path: str) -> int:
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status", "run")
        if case.find("failure") is not None:
            status = "FAILED"
        elif case.find("skipped") is not None or status == "notrun":
            status = "skipped"
        else:
            status = "passed"
        rows.append((float(case.get("time", "0")), status, case.get("name", "?")))
    rows.sort(key=lambda r: -r[0])
    for secs, status, name in rows:
        print(f"{secs:6.0f}  {status:7}  {name}")
    print(f"{sum(r[0] for r in rows):6.0f}  sum over {len(rows)} suites")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
