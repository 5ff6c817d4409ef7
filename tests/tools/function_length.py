#!/usr/bin/env python3
"""No function in src/ over 120 lines without a reason in a comment (issue 15).

A function body longer than LIMIT lines must carry, in the comment block right
above its header, the words "kept whole" and why (a precedence ladder read in
one place, a data table, one pass whose state would be passed around). Anything
else is a function doing several jobs and should be split.

Usage: function_length.py ROOT [LIMIT]   (prints each offender; exit 1 if any)

Written by hand rather than with ctags: Debian's universal-ctags is not among
the packages the build installs, and what is needed is small: C++ source with
comments, strings and character literals blanked, braces classified as
namespace/class/initializer (containers), a function body, or a block inside one.
"""
import os
import re
import sys

LIMIT = 120
CONTAINER = re.compile(r'\b(namespace|class|struct|union|enum)\b[^()]*$|^\s*extern\s+"C"')
CONTROL = re.compile(r'^\s*(if|for|while|switch|catch|do|else|try)\b')


def blank(text):
    """Comments, strings and char literals replaced by spaces; newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c); i += 1; continue
            end = text.find(')' + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c in '"\'':
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(' '); i += 1; continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(' ' * (j - i)); i = j
        else:
            out.append(c); i += 1
    return ''.join(out)


def functions(text):
    """(name, header line, first line, last line) of each function body."""
    # Preprocessor lines blanked too: they have no ';' to end a header.
    code = re.sub(r'(?m)^[ \t]*#.*$', lambda m: ' ' * len(m.group(0)), blank(text))
    line_at = []  # line number of each offset
    n = 1
    for c in code:
        line_at.append(n)
        n += c == '\n'
    stack = []  # 'c' container, 'f' function, 'b' block
    header_start = 0
    found = []
    fn = None
    for i, c in enumerate(code):
        if c == ';':
            if not stack or stack[-1] == 'c':
                header_start = i + 1
        elif c == '{':
            head = code[header_start:i]
            if stack and stack[-1] in 'fb':
                stack.append('b')
            elif CONTAINER.search(head.strip()) or '(' not in head or CONTROL.match(head) or \
                    re.search(r'=\s*$', head.split(')')[-1]):
                stack.append('c')
            else:
                m = re.search(r'([~\w:]+)\s*\(', head)
                stack.append('f')
                at = header_start + (m.start(1) if m else 0)
                fn = (m.group(1) if m else '?', line_at[at], line_at[i])
            header_start = i + 1
        elif c == '}':
            kind = stack.pop() if stack else 'c'
            if kind == 'f' and fn:
                found.append((fn[0], fn[1], fn[2], line_at[i]))
                fn = None
            if not stack or stack[-1] == 'c':
                header_start = i + 1
        elif c == ':' and (not stack or stack[-1] == 'c'):
            # "public:" / "private:" end a header; "a::b" and "ctor() : init" do not.
            if re.search(r'\b(public|private|protected)\s*$', code[header_start:i]):
                header_start = i + 1
    return found


def reason_above(lines, header_line):
    """The comment block right above line `header_line` (1-based)."""
    i = header_line - 2
    # Skip a template<> line or attributes that sit between the comment and the header.
    while i >= 0 and re.match(r'^\s*(template\s*<|\[\[)', lines[i]):
        i -= 1
    block = []
    while i >= 0 and lines[i].lstrip().startswith('//'):
        block.append(lines[i])
        i -= 1
    return ' '.join(block).lower()


def main():
    root = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else LIMIT
    bad = []
    for dirpath, _, names in os.walk(root):
        for f in sorted(names):
            if not f.endswith(('.cc', '.h')):
                continue
            path = os.path.join(dirpath, f)
            text = open(path, encoding='utf-8', errors='replace').read()
            lines = text.split('\n')
            for name, header, first, last in functions(text):
                length = last - first + 1
                if length > limit and 'kept whole' not in reason_above(lines, header):
                    bad.append(f'{os.path.relpath(path, root)}:{header}: {name} is {length} lines '
                               f'(over {limit}) with no "kept whole" reason in the comment above it')
    for b in bad:
        print(b)
    if not bad:
        print(f'every function under {root} is at most {limit} lines or says why it is kept whole')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
