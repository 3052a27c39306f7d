"""JUnit XML for CI systems (one <testsuite> per canary suite, one <testcase> per case or session
case). Pure.

``fail`` and ``xpass`` are <failure>s (both fail the gate); ``xfail`` is <skipped> with
type="xfail" and the reason; ``pass`` is an empty <testcase>.
"""

import os
import xml.etree.ElementTree as ET


def build_junit(suite_results, names=None, elapsed=None):
    """The XML document (bytes, UTF-8) for a list of ``SuiteResult``s."""
    root = ET.Element("testsuites", name="memory-router canaries")
    total = failures = skipped = 0
    for position, suite_result in enumerate(suite_results):
        name = names[position] if names else os.path.basename(suite_result.suite.path)
        counts = suite_result.counts()
        suite_failures = counts["fail"] + counts["xpass"]
        element = ET.SubElement(root, "testsuite", name=name, tests=str(counts["total"]),
                                failures=str(suite_failures), errors="0", skipped=str(counts["xfail"]))
        if elapsed is not None:
            element.set("time", f"{elapsed.get(position, 0.0):.6f}")
        classname = "canaries." + os.path.splitext(os.path.basename(suite_result.suite.path))[0]
        for result in suite_result.results + suite_result.sessions:
            case = result.case
            testcase = ET.SubElement(element, "testcase", classname=classname, name=case.id,
                                     file=suite_result.suite.path)
            if case.line is not None:
                testcase.set("line", str(case.line))
            if result.verdict in ("fail", "xpass"):
                failure = ET.SubElement(testcase, "failure", type=result.verdict,
                                        message=result.differences[0] if result.differences else result.verdict)
                failure.text = "\n".join(result.differences)
            elif result.verdict == "xfail":
                skip = ET.SubElement(testcase, "skipped", type="xfail", message=result.xfail or "")
                skip.text = "\n".join(result.differences)
        total += counts["total"]
        failures += suite_failures
        skipped += counts["xfail"]
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
