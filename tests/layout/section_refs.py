#!/usr/bin/env python3
"""Fails when a "§N.M" reference does not resolve to a section of a document inside the repository, when a
comment names a task code, when a line names a work item, or when a line names a docs/ file the repository lacks.

Code comments and docs cite the CloneSet behaviour by section: "semantics §5.9", "§4.2-§4.5", "(§7.4 ...)". A
reference resolves when the document it points at has a heading numbered that way ("### 5.9 Completion",
"## 4. Scale"); a quoted phrase right after it ('§8 "revisions equal"') must be in that section's text, and
"Appendix X" needs an "Appendix X" heading. The document is docs/semantics.md unless the line names another
Markdown file before the reference (a path ending in ".md"), which must then exist. Task codes of the sessions that wrote
the code (a letter and a digit, in parentheses or after "task"/"brief") mean nothing to a reader of the repository
and are refused in comments. References to work items (the words issue, scope, session, defect or work item
followed by a number, with or without "#") mean nothing to a reader either and are refused on any line of code,
tests, docs, CMake and scripts: say what the code does and why instead. A "docs/NAME" path must name a file or folder of the repository
(a document elsewhere cannot be read with the code). Usage:

  section_refs.py ROOT

Files are the tracked and untracked-but-not-ignored files of ROOT's git checkout with the extensions below, test
data and the layout checks' selftest excepted. Prints every unresolved reference and task code with its file and line; exit 1 if any.
"""
import os
import re
import sys

from tree import checkout_files

EXTENSIONS = (".cc", ".h", ".py", ".sh", ".proto", ".go", ".ts", ".md", ".cmake", ".txt", ".yaml", ".yml", ".tpl")
NOT_SOURCE = re.compile(r"(^|/)(testdata|fuzz_corpus|data|node_modules)/")
# The layout checks' own test writes the references and task codes they must refuse; this file names them.
SELFTEST = ("tests/layout/layout_selftest.sh", "tests/layout/section_refs.py")
DEFAULT_DOC = "docs/semantics.md"
# "§5.9", optionally with a quoted phrase of that section: '§5.9 "containers completed"', '§7.4, "set"'; and
# an appendix of the semantics ("Appendix" and a capital letter).
SECTION = re.compile(r'§\s*(\d+(?:\.\d+)*)(?:,?\s+"([^"]+)")?|\b(Appendix\s+[A-Z])\b')
DOC_NAME = re.compile(r"([\w./-]+\.md)\b")
HEADING = re.compile(r"^(#{1,6})\s+(\d+(?:\.\d+)*|Appendix\s+[A-Z])\.?(?:\s|$)")
# A comment: "//" or "#" (not a preprocessor line) or a Markdown file's text. Task codes: a letter and a digit in
# parentheses (several separated by commas), or after "task", "tasks", "brief", "briefs".
COMMENT = re.compile(r"(//|(?:^|\s)#(?!\s*(?:include|pragma|define|if|endif|else|elif|undef|error)\b)|/\*|^\s*\*)(.*)")
WORK_ITEM = re.compile(r"\b(?:issues?|scopes?|sessions?|defects?|work\s+items?)\s+#?\d+", re.IGNORECASE)
DOC_PATH = re.compile(r"(?<![\w./-])docs/[\w.-]*\w")
TASK_CODE = re.compile(r"\((?:[a-z][0-9](?:,\s*)?)+\)|\b(?:task|tasks|brief|briefs)\s+[a-z][0-9]\b")


def files(root):
    for path in checkout_files(root, "section_refs"):
        if (path.endswith(EXTENSIONS) or os.path.basename(path) in ("CMakeLists.txt", "run")) and \
                not NOT_SOURCE.search(path) and path not in SELFTEST:
            yield path


def headings(root, doc, cache):
    """{section number or "Appendix X": its text up to the next heading as deep or shallower} of `doc` (a path
    under root), or None when there is no such file."""
    if doc not in cache:
        path = os.path.join(root, doc)
        if not os.path.isfile(path):
            cache[doc] = None
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            sections, open_sections = {}, []  # open_sections: [(depth, name)] enclosing the current line
            for line in lines:
                m = HEADING.match(line)
                if m:
                    depth = len(m.group(1))
                    open_sections = [(d, n) for d, n in open_sections if d < depth]
                    name = re.sub(r"\s+", " ", m.group(2))
                    open_sections.append((depth, name))
                    sections.setdefault(name, "")
                elif line.startswith("#"):
                    depth = len(line) - len(line.lstrip("#"))
                    open_sections = [(d, n) for d, n in open_sections if d < depth]
                for _, name in open_sections:
                    sections[name] += line
            cache[doc] = sections
    return cache[doc]


def resolve_doc(root, path, name):
    """A Markdown file named on a line: as written from the root, beside the citing file, or under docs/."""
    for candidate in (name, os.path.join(os.path.dirname(path), name), os.path.join("docs", os.path.basename(name))):
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return os.path.normpath(name)


def check(root):
    problems, refs, cache = [], 0, {}
    for path in files(root):
        is_markdown = path.endswith(".md")
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            for m in SECTION.finditer(line):
                if m.group(3) and "semantics" not in line[:m.start()]:
                    continue  # an appendix of something else (a standard, a paper)
                refs += 1
                section, phrase = (m.group(1), m.group(2)) if m.group(1) else (re.sub(r"\s+", " ", m.group(3)), None)
                shown = f"§{section}" if m.group(1) else section
                named = DOC_NAME.findall(line[:m.start()])
                doc = resolve_doc(root, path, named[-1]) if named else DEFAULT_DOC
                known = headings(root, doc, cache)
                if known is None:
                    problems.append(f"{path}:{number}: {shown} cites {doc}, which is not in the repository")
                elif section not in known:
                    problems.append(f"{path}:{number}: {shown} has no heading '{section}' in {doc}")
                elif phrase and phrase not in known[section]:
                    problems.append(f'{path}:{number}: {shown} "{phrase}": the phrase is not in {doc} {section}')
            w = WORK_ITEM.search(line)
            if w:
                problems.append(f"{path}:{number}: work item {w.group(0)!r}; say what the code does and why")
            for d in DOC_PATH.finditer(line):
                if not os.path.exists(os.path.join(root, d.group(0))):
                    problems.append(f"{path}:{number}: {d.group(0)} is not in the repository; cite a document it has"
                                    " (docs/semantics.md sections)")
            text = line if is_markdown else (COMMENT.search(line) or [None, None, None])[2]
            if text:
                t = TASK_CODE.search(text)
                if t:
                    problems.append(f"{path}:{number}: task code {t.group(0)!r} in a comment; say what it means")
    return problems, refs


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems, refs = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"section_refs: {len(problems)} problem(s); a section reference must name a heading of a document in"
              " the repository (default docs/semantics.md)")
        return 1
    print(f"section_refs: all {refs} section references resolve; no task codes, work items or missing docs/ files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
