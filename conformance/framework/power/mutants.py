"""The mutation operators of ``mdlri-conformance mutate``: small AST mutants of one module.

A mutant is one change at one place of a simulator module, written back as a splice of the
original text (the rest of the file is kept byte for byte, so every other line keeps its
number). The operators are the classic small faults of an implementation that a conformance
suite should tell from the right one:

* ``compare``: one comparison operator swapped (``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <->
  ``!=``, ``is`` <-> ``is not``, ``in`` <-> ``not in``);
* ``number``: an integer literal plus one and minus one (``n`` -> ``n + 1``, ``n - 1``);
* ``boolop``: ``and`` <-> ``or``;
* ``rc``: a return-code constant of the API (``OK``, ``E_PARAM``, ... of ``sim/api/checks.py``, or
  an ``Err.X`` member, or a 6-digit aclError literal) replaced by another code: success becomes
  107000, 107000 becomes 100000, any other code 107000 (the suite asserts exact codes);
* ``condition``: the test of an ``if`` / ``while`` / ``x if c else y`` negated;
* ``not``: a ``not`` removed;
* ``bool``: ``True`` <-> ``False``;
* ``statement``: a statement removed (replaced by ``pass``): a call made for its effect, an
  assignment to an attribute or an item (a state update), an augmented assignment, a
  ``return`` inside a guard (the guard then falls through).

Left alone, because a change there cannot alter behaviour: docstrings, annotations (the modules
use ``from __future__ import annotations``), f-strings (messages), ``__all__``, and the planted
faults' plumbing (``backends/faults.py``, the kill matrix's business): what runs only when
``self.has_fault(NAME)`` is true (the body of ``if has_fault(...)`` or ``if x and
has_fault(...)``, the value of ``v if has_fault(...) else w``) and the other operands of a
conjunction with a ``has_fault`` call, false in every run without ``--fault``. The condition
and ``and``/``or`` of such a test are still mutated: they make the fault run in a plain run.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from mdlri_conformance.backends.contract import Err

OPERATORS = ("compare", "number", "boolop", "rc", "condition", "not", "bool", "statement")

_COMPARE_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In,
}
#: the return-code names of ``backends/sim/api/checks.py`` (and their integer values)
RC_NAMES = {"OK": 0, "E_NULL": 100000, "E_PARAM": 107000, "E_HANDLE": 107017,
            "E_NOT_SUPPORT": 207000, "E_INTERNAL": 507000, "E_NOT_CAPTURED": 107029,
            "E_GRP_STATUS": 107033, "E_EXECUTE": 507011, "E_STREAM_MODEL": 107005}
#: the enum of aclError values (``backends/contract.py``)
RC_ENUM = "Err"
#: an integer literal ``nnn_xxx`` with one of these thousands is an aclError code
_RC_FAMILIES = (100, 107, 207, 507)


@dataclass(frozen=True)
class Mutant:
    """One change: where (module relative to the mutated root, 1-based line, 0-based column,
    end), what (operator, original and mutated text) and in which function."""

    module: str
    line: int
    col: int
    end_line: int
    end_col: int
    operator: str
    original: str
    mutated: str
    function: str
    #: first line of the innermost statement holding the change (what line coverage records)
    stmt_line: int

    @property
    def ident(self) -> str:
        """A stable id: module, position, operator and the replacement text."""
        return f"{self.module}:{self.line}:{self.col}:{self.operator}:{self.mutated}"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["id"] = self.ident
        return d


def _rc_replacement(value: int) -> str:
    """Another return code for ``value``: success -> 107000, 107000 -> 100000, else 107000."""
    if value == 0:
        return "107000"
    if value == 107000:
        return "100000"
    return "107000"


def fault_only(expr: ast.expr) -> bool:
    """False in every run without ``--fault``: a ``has_fault(...)`` call, or an ``and`` with
    one among its operands."""
    if isinstance(expr, ast.Call):
        f = expr.func
        return ((isinstance(f, ast.Attribute) and f.attr == "has_fault")
                or (isinstance(f, ast.Name) and f.id == "has_fault"))
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
        return any(fault_only(v) for v in expr.values)
    return False


def _is_docstring(stmt: ast.stmt, body: list[ast.stmt]) -> bool:
    return (stmt is body[0] and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str))


class _Collector(ast.NodeVisitor):
    """Walks a module and collects, per mutant, the node, operator, replacement text,
    enclosing function and statement line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.found: list[tuple[ast.AST, str, str, str, int]] = []
        self.scope: list[str] = []
        self.stmt: list[int] = [0]
        self.guarded = 0  # depth of if-bodies: a return there is a guard's early exit

    def add(self, node: ast.AST, operator: str, text: str) -> None:
        self.found.append((node, operator, text, ".".join(self.scope) or "<module>",
                           self.stmt[-1]))

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    # -- scopes and statements ------------------------------------------------------------
    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stmt.append(node.lineno)  # decorators and defaults run with the definition
        for d in node.decorator_list:
            self.visit(d)
        if not isinstance(node, ast.ClassDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)
        self.stmt.pop()
        self.scope.append(node.name)
        self._body(node.body)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if _is_docstring(stmt, body):
                continue
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            self.stmt.append(node.lineno)
            self._removal(node)
            self._children(node)
            self.stmt.pop()
        else:
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "type_comment"):
                continue
            items = value if isinstance(value, list) else [value]
            if name in ("body", "orelse", "finalbody") and isinstance(node, ast.stmt):
                if isinstance(node, (ast.If, ast.While)):
                    self.guarded += 1
                    self._body([s for s in items if isinstance(s, ast.stmt)])
                    self.guarded -= 1
                else:
                    self._body([s for s in items if isinstance(s, ast.stmt)])
                continue
            for item in items:
                if isinstance(item, ast.AST):
                    self.visit(item)

    def _removal(self, stmt: ast.stmt) -> None:
        removable = (
            (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call))
            or isinstance(stmt, ast.AugAssign)
            or (isinstance(stmt, ast.Assign)
                and all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in stmt.targets))
            or (isinstance(stmt, ast.Return) and self.guarded > 0 and self.scope != []))
        if removable:
            self.add(stmt, "statement", "pass")

    # -- skipped subtrees -----------------------------------------------------------------
    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self.stmt.append(node.lineno)
        self.add(node.test, "condition", f"not ({self.segment(node.test)})")
        if fault_only(node.test):  # the body runs only with a planted fault
            self._fault_test(node.test)
            self.guarded += 1
            self._body(node.orelse)
            self.guarded -= 1
            self.stmt.pop()
            return
        self.stmt.pop()
        self.generic_visit(node)

    def _fault_test(self, test: ast.expr) -> None:
        """Only the ``and`` -> ``or`` of a planted-fault test (its operands cannot matter)."""
        if isinstance(test, ast.BoolOp):
            self.visit_BoolOp(test)

    def visit_While(self, node: ast.While) -> None:
        self.stmt.append(node.lineno)
        self.add(node.test, "condition", f"not ({self.segment(node.test)})")
        self.stmt.pop()
        self.generic_visit(node)

    # -- expressions ----------------------------------------------------------------------
    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.add(node.test, "condition", f"not ({self.segment(node.test)})")
        if fault_only(node.test):  # the value before ``if`` is taken only with the fault
            self._fault_test(node.test)
            self.visit(node.orelse)
            return
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is None:
                continue
            copy = ast.Compare(left=node.left, ops=list(node.ops), comparators=node.comparators)
            copy.ops[i] = swap()
            self.add(node, "compare", ast.unparse(copy))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.add(node, "boolop", ast.unparse(ast.BoolOp(op=other, values=node.values)))
        if not fault_only(node):
            self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self.add(node, "not", f"({self.segment(node.operand)})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, bool):
            self.add(node, "bool", str(not v))
        elif isinstance(v, int):
            if v // 1000 in _RC_FAMILIES:
                self.add(node, "rc", _rc_replacement(v))
            else:
                self.add(node, "number", str(v + 1))
                self.add(node, "number", str(v - 1))

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in RC_NAMES:
            self.add(node, "rc", _rc_replacement(RC_NAMES[node.id]))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and node.value.id == RC_ENUM):
            member = getattr(Err, node.attr, None)
            if member is not None:
                self.add(node, "rc", _rc_replacement(int(member)))
            return
        self.generic_visit(node)


def _offset(lines: list[str], line: int, col: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column) in the text."""
    head = sum(len(s) for s in lines[:line - 1])
    return head + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))


def apply(source: str, m: Mutant) -> str:
    """The module's text with the mutant's change spliced in."""
    lines = source.splitlines(keepends=True)
    start = _offset(lines, m.line, m.col)
    end = _offset(lines, m.end_line, m.end_col)
    return source[:start] + m.mutated + source[end:]


def mutants_of(source: str, module: str, operators: tuple[str, ...] = OPERATORS
               ) -> list[Mutant]:
    """Every mutant of one module's source, in text order; each one compiles."""
    tree = ast.parse(source)
    col = _Collector(source)
    col.visit(tree)
    out: list[Mutant] = []
    seen: set[str] = set()
    for node, operator, text, function, stmt_line in col.found:
        if operator not in operators:
            continue
        original = col.segment(node)
        if text == original:
            continue
        m = Mutant(module=module, line=node.lineno, col=node.col_offset,  # type: ignore[attr-defined]
                   end_line=node.end_lineno, end_col=node.end_col_offset,  # type: ignore[attr-defined]
                   operator=operator, original=original, mutated=text, function=function,
                   stmt_line=stmt_line or node.lineno)  # type: ignore[attr-defined]
        if m.ident in seen or not compiles(apply(source, m)):
            continue
        seen.add(m.ident)
        out.append(m)
    out.sort(key=lambda m: (m.line, m.col, m.operator, m.mutated))
    return out


def compiles(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec")
    except SyntaxError:
        return False
    return True


def iter_modules(root: Path, pattern: str = "**/*.py") -> Iterator[Path]:
    """The mutable modules under ``root`` (a Path), sorted, package ``__init__`` included."""
    yield from sorted(p for p in root.glob(pattern) if "__pycache__" not in p.parts)


__all__ = ["Mutant", "OPERATORS", "RC_NAMES", "apply", "compiles", "fault_only", "iter_modules",
           "mutants_of"]
