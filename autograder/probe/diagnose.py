"""Likely causes for the mistakes the lessons warn about, read off the student's Function itself or
the error autograd raised.

A failed comparison says *what* is wrong; these say *why*, by looking at what a Function kept on
`ctx`, what its backward calls, and how its gradients behave. They run beside student code, so they
only ever add text to a verdict the judge reached on its own.
"""

import dis
import inspect
import itertools
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch.overrides import TorchFunctionMode

from autograder.wire.tensors import is_zero

# Central differences step, as gradcheck takes it for float64.
_EPS = 1e-6
_CUTTING_CALLS = {
    "detach": "`.detach()`",
    "detach_": "`.detach_()`",
    "data": "`.data`",
    "no_grad": "`torch.no_grad()`",
    "inference_mode": "`torch.inference_mode()`",
    "item": "`.item()`",
    "tolist": "`.tolist()`",
    "tensor": "`torch.tensor(...)` (of tensors, a copy of their values; torch.stack(...) keeps the graph)",
}


def function_class(output: torch.Tensor) -> type | None:
    """The custom Function that produced `output`, if it was one."""
    return getattr(output.grad_fn, "_forward_cls", None)


# How the walk of the code reached a function: the code itself or a plain helper it calls; a method,
# but setup_context, of one of the notebook's classes (a Function's rule); a setup_context. A route only
# goes down that list: what a rule or a setup_context calls belongs to it.
_OWN, _IN_RULES, _IN_SETUP_CONTEXT = range(3)


@dataclass
class NamesUsed:
    """The attribute and global names an answer's code uses, and the keywords it passes (as
    `create_graph=`), found in one walk of it and of the helpers it calls, except the grader's own, and
    split by where they are used. Other Functions it calls (`CubeBackward.apply`) count apart: calling one
    is the cure, not the disease, for a backward; for a result, the Function's rules are part of how it
    was computed, its setup_context apart from them, as it runs without grad.

    `readable` is False where there is no code to read (a builtin, a callable object)."""

    own: set[str] = field(default_factory=set)
    in_rules: set[str] = field(default_factory=set)
    in_setup_context: set[str] = field(default_factory=set)
    numpy_own: bool = False
    numpy_in_classes: bool = False
    readable: bool = True
    # Names the code (not a rule or a setup_context) loads as a global or a builtin, as a call float(...)
    # does, where an attribute of that name (`.float()`) is no such load.
    loaded_by_name: set[str] = field(default_factory=set)
    # Whether the code (not a rule or a setup_context) assigns a .grad (`p.grad = None`).
    stores_grad: bool = False
    # For each call of torch.autograd.grad in the function's own code, not its helpers', in the order
    # written, whether it passes create_graph (see _recorded).
    gradient_calls: list[bool] = field(default_factory=list)

    @property
    def everywhere(self) -> set[str]:
        return self.own | self.in_rules | self.in_setup_context

    @property
    def outside_setup_context(self) -> set[str]:
        return self.own | self.in_rules

    @property
    def uses_numpy(self) -> bool:
        return self.numpy_own or self.numpy_in_classes

    @property
    def calls_backward(self) -> bool | None:
        """Whether the code calls .backward() (or torch.autograd.backward), following its helpers: the
        one call that fills .grad; where it makes none, a filled .grad was written by the code itself.
        None where there is no code to read."""
        return "backward" in self.own if self.readable else None


def names_used(function) -> NamesUsed:
    """What `function`'s code uses, following plain helpers and the notebook's own classes two calls
    deep, read in one walk."""
    used = NamesUsed(readable=getattr(function, "__code__", None) is not None)
    _walk(function, _DEPTH, _OWN, used)
    return used


# How many calls deep names_used follows the code's helpers.
_DEPTH = 2


def _walk(function, depth: int, route: int, used: NamesUsed) -> None:
    """Add what `function`'s code uses to `used`, under `route`, then walk what it calls."""
    code = getattr(function, "__code__", None)
    if code is None:
        return
    names, pending = set(), [code]
    autograd = _autograd_names(function) if depth == _DEPTH else None
    while pending:
        current = pending.pop(0)
        names.update(_read(current, used, route, autograd))
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    (used.own, used.in_rules, used.in_setup_context)[route].update(names)
    uses_numpy = "numpy" in names
    for name in names & set(function.__globals__):
        value = function.__globals__[name]
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "numpy":
            uses_numpy = True
        elif depth > 0:
            for helper, helper_route in _called_from(function, value, route):
                _walk(helper, depth - 1, helper_route, used)
    if route == _OWN:
        used.numpy_own |= uses_numpy
    else:
        used.numpy_in_classes |= uses_numpy


def _read(code: types.CodeType, used: NamesUsed, route: int, autograd: tuple | None) -> set[str]:
    """The names one code object (not its nested functions) uses and the keywords it passes, reading its
    instructions once; on the code's own route, what it loads by name and whether it assigns a .grad go
    to `used`, and at the root, given the names its module has for torch.autograd and its grad
    (`_autograd_names`), the gradient calls it makes."""
    instructions = list(dis.get_instructions(code))
    names = set(code.co_names)
    if "detach" in names and _detaches_only_into_leaves(instructions):
        names = (names - {"detach"}) | {_FRESH_LEAF}
    if names & _NO_RECORDING and _no_recording_only_copies(instructions):
        # x0 = x.detach().clone() under torch.no_grad() is a value either way: the block cuts nothing.
        names -= _NO_RECORDING
    names.update(f"{k}=" for k in _keywords_passed(code, instructions))
    if route == _OWN:
        used.loaded_by_name.update(i.argval for i in instructions if i.opname in {"LOAD_GLOBAL", "LOAD_NAME"})
        used.stores_grad |= any(i.opname == "STORE_ATTR" and i.argval == "grad" for i in instructions)
    if autograd is not None:
        used.gradient_calls.extend(_recorded(code, instructions, *autograd))
    return names


def _called_from(function, value, route: int) -> list[tuple[types.FunctionType, int]]:
    """The functions a global `value` that `function` uses leads the walk to, each with its route: a plain
    function, or the methods of a class of the notebook's own. The grader's own helpers are not the
    answer: what they use is no cause the answer can have."""
    if isinstance(value, types.FunctionType):
        return [] if getattr(value, "__module__", "").startswith("autograder") else [(value, route)]
    if not isinstance(value, type) or value.__module__ != function.__module__:
        return []
    methods = [(k, getattr(v, "__func__", v)) for k, v in vars(value).items()]
    return [
        (method, max(route, _IN_SETUP_CONTEXT if k == "setup_context" else _IN_RULES))
        for k, method in methods
        if isinstance(method, types.FunctionType)
    ]


# What names_used reports for code whose every .detach() is followed by .requires_grad_(): a new leaf,
# whose uses autograd records, cut only from the history of the tensor it copies.
_FRESH_LEAF = "detach().requires_grad_"
# What may stand between a method's load and the next one chained to its result.
_CALLING = {"PRECALL", "CALL", "CACHE"}


# Instructions that push one value each: a call's keyword values, when every one is one of these, are
# the instructions right before the tuple of its keyword names.
_SINGLE_PUSHES = {"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL"}


def _keywords_passed(code: types.CodeType, instructions: list[dis.Instruction]) -> set[str]:
    """The keywords the calls in `code` (not its nested functions) pass, but for one given a false
    constant (create_graph=False), which to the function called is the same as leaving it out. A value
    that is not a plain load counts as passed: the code shows no more."""
    return set().union(*(_passed_at(code, instructions, n) for n in range(len(instructions))))


def _passed_at(code: types.CodeType, instructions: list[dis.Instruction], n: int) -> set[str]:
    """The keywords the call instructions[n] names passes, as _keywords_passed counts them."""
    keywords = _keyword_names(code, instructions, n)
    values = instructions[max(n - len(keywords), 0) : n]
    if len(values) != len(keywords) or any(v.opname not in _SINGLE_PUSHES for v in values):
        return set(keywords)
    return {k for k, v in zip(keywords, values, strict=True) if v.opname != "LOAD_CONST" or v.argval}


def _autograd_names(function) -> tuple[set[str], set[str]]:
    """The names under which `function`'s code may reach torch.autograd (torch's attribute `autograd`, or
    `import torch.autograd as ag`) and torch.autograd.grad itself (`from torch.autograd import grad`),
    as its module binds them."""
    bound = getattr(function, "__globals__", {})
    modules = {"autograd"} | {name for name, value in bound.items() if value is torch.autograd}
    return modules, {name for name, value in bound.items() if value is torch.autograd.grad}


def _recorded(
    code: types.CodeType, instructions: list[dis.Instruction], modules: set[str], functions: set[str]
) -> list[bool]:
    """For each call of torch.autograd.grad in `code`, in the order written, whether it passes
    create_graph: a gradient taken without it is a constant. `modules` and `functions` are the names the
    code reaches torch.autograd and its grad by. Instructions of one call start where the call does.
    torch.func's grad, which records anyway, is not counted."""
    recorded = []
    for n in range(len(instructions)):
        loads = _loads_autograd_grad(instructions, n, modules, functions)
        call = _call_of(instructions, n) if loads else None
        if call is not None:
            passed = set().union(*(_passed_at(code, instructions, m) for m in range(n + 1, call)))
            # Keywords unpacked from a mapping (**options) are not in the code: count them as passed.
            recorded.append("create_graph" in passed or instructions[call].opname == "CALL_FUNCTION_EX")
    return recorded


def _loads_autograd_grad(
    instructions: list[dis.Instruction], n: int, modules: set[str], functions: set[str]
) -> bool:
    """Whether instructions[n] loads torch.autograd.grad: the attribute grad of one of `modules`, not a
    tensor's .grad, or one of `functions` by name."""
    instruction = instructions[n]
    if instruction.opname in {"LOAD_GLOBAL", "LOAD_NAME"}:
        return instruction.argval in functions
    return (
        n > 0
        and instruction.opname in {"LOAD_METHOD", "LOAD_ATTR"}
        and instruction.argval == "grad"
        and instructions[n - 1].argval in modules
    )


def _call_of(instructions: list[dis.Instruction], n: int) -> int | None:
    """The index of the call instruction that calls the name instructions[n] loads, or None where that
    name is not called but read on (p.grad.sum()) or used as a value."""
    start = _start(instructions[n])
    following = instructions[n + 1 : n + 2]
    if following and following[0].opname in {"LOAD_ATTR", "LOAD_METHOD"} and _start(following[0]) == start:
        return None
    return next(
        (
            m
            for m in range(n + 1, len(instructions))
            if instructions[m].opname in _CALLS and _start(instructions[m]) == start
        ),
        None,
    )


def _start(instruction: dis.Instruction) -> tuple:
    """Where the source an instruction runs for begins: its line and column."""
    return instruction.positions.lineno, instruction.positions.col_offset


_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION_EX"}


def _keyword_names(code: types.CodeType, instructions: list[dis.Instruction], n: int) -> tuple[str, ...]:
    """The keyword names of the call instructions[n] names them for: KW_NAMES up to Python 3.12, a
    constant loaded right before CALL_KW from 3.13; () for any other instruction."""
    instruction = instructions[n]
    if instruction.opname == "KW_NAMES":
        return code.co_consts[instruction.arg]
    if n + 1 < len(instructions) and instructions[n + 1].opname == "CALL_KW":
        return instruction.argval
    return ()


def _detaches_only_into_leaves(instructions: list[dis.Instruction]) -> bool:
    """Whether every .detach() in a code object's `instructions` (not its nested functions') is called and
    chained straight into .requires_grad_(), as in `x = x.detach().requires_grad_()`."""
    instructions = [i for i in instructions if i.opname not in _CALLING]
    loads = [n for n, i in enumerate(instructions) if i.opname in {"LOAD_METHOD", "LOAD_ATTR"}]
    detaches = [n for n in loads if instructions[n].argval == "detach"]
    return bool(detaches) and all(
        n + 1 < len(instructions) and instructions[n + 1].argval == "requires_grad_" for n in detaches
    )


def _leaves_copy_untracked_arguments(function, args: tuple) -> bool:
    """Whether every .detach() that `function` itself calls copies one of its arguments, as the caller gave
    it, that does not require grad (`points = points.detach().requires_grad_()` for points with no
    history): such a new leaf cuts nothing, there being no history to cut. False wherever a detach is
    elsewhere (a nested function or a helper) or copies anything else."""
    code = getattr(function, "__code__", None)
    if code is None or any(
        "detach" in nested.co_names for nested in code.co_consts if isinstance(nested, types.CodeType)
    ):
        return False
    parameters = code.co_varnames[: code.co_argcount]
    instructions = [i for i in dis.get_instructions(code) if i.opname not in _CALLING]
    copied, stored = [], set()
    for before, instruction in itertools.pairwise(instructions):
        if before.opname == "STORE_FAST":
            stored.add(before.argval)
        if instruction.opname in {"LOAD_METHOD", "LOAD_ATTR"} and instruction.argval == "detach":
            if before.opname != "LOAD_FAST" or before.argval not in parameters or before.argval in stored:
                return False
            copied.append(parameters.index(before.argval))
    return bool(copied) and all(
        index < len(args) and isinstance(args[index], torch.Tensor) and not args[index].requires_grad
        for index in copied
    )


# Names by which code takes a gradient in reverse mode: torch.autograd.grad, .backward() and the .grad it
# fills, torch.func's grad, grad_and_value, vjp, jacrev and hessian.
_REVERSE_MODE = {"grad", "backward", "vjp", "jacrev", "hessian", "grad_and_value"}


def ways_out_of_the_graph(function, used: NamesUsed, args: tuple = (), copies_tensors: bool = True) -> dict:
    """What the code computing a result uses of what leaves a tensor without a graph, so that the judge names
    only causes the answer can have: the calls that cut it from the graph, whether its only .detach()
    makes new leaves (`x.detach().requires_grad_()`) that cut a history (not where each copies an
    argument among `args` that has none), NumPy, and whether it takes a gradient in reverse mode and
    passes create_graph (or retain_graph, which is no substitute) anywhere. Read off what the code uses,
    `used` (names_used), following the helpers and the notebook's own classes (a Function's rules) it
    reaches. A copy setup_context makes is its own cause: the copy, not the call that made it, is what has
    no history there. torch.tensor(...) cuts only where it copies a tensor: `copies_tensors` is False where
    the probe saw every call of it take plain numbers (torch.tensor(0.01)), which have no graph to cut."""
    names, elsewhere = used.everywhere, used.outside_setup_context
    # setup_context runs with grad disabled, before autograd links the output into the graph: a copy it
    # makes or a tensor it computes has no history, so what a rule computes from it is cut from the inputs.
    copies = [text for name, text in _COPYING.items() if name in used.in_setup_context]
    return {
        "calls": [
            text
            for name, text in _CUTTING_CALLS.items()
            if (name in elsewhere or (name in names and text not in copies))
            and (name != "tensor" or copies_tensors)
        ],
        "fresh_leaves": _FRESH_LEAF in names and not _leaves_copy_untracked_arguments(function, args),
        "numpy": used.uses_numpy,
        "takes_gradients": bool(names & _REVERSE_MODE),
        "create_graph": "create_graph=" in names,
        "retain_graph": "retain_graph=" in names,
        "gradient_calls_recorded": used.gradient_calls,
        "copies_in_setup_context": copies,
        "computed_in_setup_context": _computed(used.in_setup_context),
    }


# The context managers under which autograd records nothing.
_NO_RECORDING = {"no_grad", "inference_mode"}
# What may run under them in a block that only copies tensors: loads, stores, calls, and the copying calls.
_PLUMBING = {
    "LOAD_FAST",
    "LOAD_CONST",
    "STORE_FAST",
    "POP_TOP",
    "NOP",
    "PRECALL",
    "CALL",
    "CACHE",
    "KW_NAMES",
}


def _no_recording_only_copies(instructions: list[dis.Instruction]) -> bool:
    """Whether every torch.no_grad() (or inference_mode()) block in a code object's `instructions` (not
    its nested functions') does nothing but copy tensors (x0 = x.detach().clone(), w = v.clone()): such a
    copy is a value without history whether autograd records or not, so the block cuts nothing that a
    copy outside it would not. False where there is no such block, or one computes anything else."""
    blocks = [
        n
        for n, i in enumerate(instructions)
        if i.opname == "BEFORE_WITH"
        and any(j.argval in _NO_RECORDING for j in instructions[max(n - 4, 0) : n])
    ]
    return bool(blocks) and all(_copies_only(instructions, n) for n in blocks)


def _copies_only(instructions: list[dis.Instruction], n: int) -> bool:
    """Whether the body of the with block whose BEFORE_WITH is instructions[n] only copies tensors: its
    instructions, up to the exit, which runs on the with statement's own line, are loads, stores, calls
    and the copying methods (or torch.clone)."""
    line = instructions[n].positions.lineno
    body = []
    for instruction in instructions[n + 2 :]:
        if instruction.positions.lineno == line:
            break
        body.append(instruction)
    return bool(body) and all(
        i.opname in _PLUMBING
        or (i.opname in {"LOAD_METHOD", "LOAD_ATTR"} and i.argval in _COPYING.keys() - {"copy_"})
        or (i.opname == "LOAD_GLOBAL" and i.argval == "torch")
        for i in body
    )


# Calls that give a new tensor with the values of another, as the feedback spells them: in setup_context,
# one without a history.
_COPYING = {
    "clone": "`.clone()`",
    "copy_": "`.copy_()`",
    "contiguous": "`.contiguous()`",
    "detach": "`.detach()`",
    "detach_": "`.detach_()`",
    "data": "`.data`",
}


# torch functions that tell about a tensor or a setting and compute none.
_NOT_A_TENSOR = {"numel", "dim", "result_type", "promote_types", "can_cast"}


def _computed(names: set[str]) -> list[str]:
    """The torch operations among `names` that compute a tensor (tanh, exp), as the feedback spells them;
    copying calls apart."""
    return sorted(
        f"`{name}`"
        for name in names - _COPYING.keys() - _NOT_A_TENSOR
        if isinstance(getattr(torch, name, None), types.BuiltinFunctionType | types.FunctionType)
        and not name.startswith(("is_", "get_"))
    )


def functions_on_the_way(outputs: list[torch.Tensor]) -> list[str]:
    """The custom Functions whose backward a gradient of `outputs` runs through, by name: with no way out
    of the graph in the code, a wrong gradient is one of theirs."""
    return [cls.__name__ for cls in _function_classes_on_the_way(outputs)]


def rules_on_the_way(outputs: list[torch.Tensor]) -> dict[str, list[str]]:
    """The derivative rules of the custom Functions on the way from `outputs`: "defined", backward and,
    where one of them defines it, jvp; "in_place", those whose code changes a tensor in place
    (result.square_(), grad *= ...), where a wrong derivative may come from a saved tensor so changed."""
    defined, in_place = ["backward"], []
    for cls in _function_classes_on_the_way(outputs):
        if cls.jvp is not torch.autograd.Function.jvp and "jvp" not in defined:
            defined.append("jvp")
        for rule in ("backward", "jvp"):
            if rule not in in_place and _changes_in_place(getattr(cls, rule)):
                in_place.append(rule)
    return {"defined": defined, "in_place": in_place}


def _function_classes_on_the_way(outputs: list[torch.Tensor]) -> list[type]:
    classes: list[type] = []
    for node in nodes_on_the_way(outputs):
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and cls not in classes:
            classes.append(cls)
    return classes


def nodes_on_the_way(outputs: list[torch.Tensor]) -> Iterator:
    """Each node of the outputs' graph once, read off the graph without running a backward: a caller that
    finds what it looks for stops the walk there."""
    seen, pending = set(), [output.grad_fn for output in outputs]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        yield node
        pending.extend(following for following, _ in node.next_functions)


def leads_back_to(result: torch.Tensor, leaf: torch.Tensor) -> bool:
    """Whether result's graph leads back to leaf (its AccumulateGrad node holds it), read off the graph
    without running a backward."""
    return any(getattr(node, "variable", None) is leaf for node in nodes_on_the_way([result]))


# Tensor methods named like in-place ones that change no values.
_NOT_A_CHANGE = {"requires_grad_", "retain_grad_"}


def _changes_in_place_by(name: str) -> bool:
    """Whether a Tensor method of that name changes its tensor in place (square_, mul_)."""
    return name.endswith("_") and not name.startswith("_") and name not in _NOT_A_CHANGE


def _changes_in_place(rule) -> bool:
    """Whether a rule's code calls a Tensor method in place (square_, mul_) or assigns in place (*=)."""
    code = getattr(rule, "__code__", None)
    if code is None:
        return False
    names = names_used(rule).own
    if any(_changes_in_place_by(name) for name in names & set(dir(torch.Tensor))):
        return True
    return any(
        instruction.opname == "BINARY_OP" and instruction.argrepr.endswith("=")
        for instruction in dis.get_instructions(code)
    )


def functions_backward_calls(output: torch.Tensor, grads) -> list[str]:
    """The custom Functions, other than the one behind `output`, that the gradients its backward returned
    (with create_graph=True) were computed through: only then can a lost second derivative be theirs."""
    own = function_class(output)
    return [name for name in functions_on_the_way(list(grads)) if own is None or name != own.__name__]


def tensors_in(value) -> Iterator[torch.Tensor]:
    """The tensors in what a torch operation returns or takes, nested in tuples, lists and dicts as
    torch.stack's or torch.cat's arguments are."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensors_in(item)


class TensorsMade(TorchFunctionMode):
    """Keeps every tensor a torch call returns while it is active, whether the code under it returns the
    tensor or drops it: a leaf an answer made and left in a reference cycle, a gradient a backward
    computed for nothing, or a float32 tensor made among float64 ones. Notes too whether torch.tensor
    copied a tensor (`copies_tensors`), which cuts it from the graph, where of plain numbers it cuts
    nothing, and which tensors hold numbers written in (`written_in`)."""

    def __init__(self) -> None:
        super().__init__()
        self.tensors: list[torch.Tensor] = []
        self.copies_tensors = False
        self._written: set[int] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.tensor and any(True for _ in tensors_in(args[:1])):
            self.copies_tensors = True
        result = func(*args, **(kwargs or {}))
        made = list(tensors_in(result))
        self.tensors.extend(made)
        if self._writes_numbers(func, args, kwargs):
            self._written.update(id(tensor) for tensor in made)
        return result

    def _writes_numbers(self, func, args, kwargs) -> bool:
        """Whether `func` makes its tensor of numbers written in: a factory of given values, or an operation
        on such tensors and plain numbers alone (torch.ones_like(l) * 12.5)."""
        if getattr(func, "__name__", None) in _WRITING_NUMBERS:
            # torch.tensor(t) of a tensor copies values computed from the inputs: those are not written in.
            return func not in {torch.tensor, torch.as_tensor} or not any(True for _ in tensors_in(args[:1]))
        inputs = list(tensors_in((args, kwargs or {})))
        return bool(inputs) and all(id(tensor) in self._written for tensor in inputs)

    def written_in(self, tensor) -> bool:
        """Whether the code made `tensor` of numbers written in, computing nothing from its inputs."""
        return isinstance(tensor, torch.Tensor) and id(tensor) in self._written


# torch calls that make a tensor of the values they are given, whatever the inputs' values.
_WRITING_NUMBERS = {
    "tensor",
    "as_tensor",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
    "new_tensor",
    "new_full",
    "new_ones",
    "new_zeros",
}


# Calls that make a tensor of a lower precision than float64, as the feedback spells them, by the name the
# code uses: torch.tensor and torch.as_tensor make Python floats float32.
_MAKING_FLOAT32 = {
    "tensor": "`torch.tensor(...)`",
    "as_tensor": "`torch.as_tensor(...)`",
    "float": "`.float()`",
    "float32": "`torch.float32`",
}


def float32_made(made: list[torch.Tensor], args: tuple, used: NamesUsed) -> dict | None:
    """Where the arguments hold float64 tensors (a network's parameters too) and the code made a float32
    tensor (torch.tensor(0.01) is float32): the calls of the code that make one. What such a tensor
    touches is rounded to about 7 digits, off the checks' float64 values by that rounding alone. None
    where the code made none."""
    inputs = list(tensors_in(args)) + [
        p for arg in args if isinstance(arg, torch.nn.Module) for p in arg.parameters()
    ]
    if not any(tensor.dtype == torch.float64 for tensor in inputs):
        return None
    if not any(tensor.dtype == torch.float32 for tensor in made):
        return None
    names = used.own - {name for name in used.loaded_by_name if name == "float"}
    return {"calls": [text for name, text in _MAKING_FLOAT32.items() if name in names]}


def tensor_in_a_gradient_cycle(tensors: list[torch.Tensor]) -> torch.Tensor | None:
    """The first of `tensors` that holds in .grad a gradient with a graph, which leads back to that tensor:
    .backward(create_graph=True) made it, or a later pass through a tensor that retains its gradient, and
    the cycle runs through C++ objects that Python's garbage collector cannot see, so none of it is ever
    freed (PyTorch issue #4661). None if no tensor holds one."""
    with warnings.catch_warnings():
        # A non-leaf's .grad warns when read; backward(inputs=[...]) fills it all the same.
        warnings.simplefilter("ignore", UserWarning)
        for tensor in tensors:
            try:  # a tensor a torch.func transform wrapped may be dead by now
                if tensor.grad is not None and tensor.grad.grad_fn is not None:
                    return tensor
            except RuntimeError:
                continue
    return None


def calls_making_numbers(used: NamesUsed) -> list[str]:
    """The calls the code makes, following its helpers, that turn a tensor into a Python number, as the
    feedback spells them: where a tensor was expected and a number came back, the one to name. float
    counts only called by its own name, the builtin: `.float()` and `torch.float` keep a tensor. `used` is
    the code's one walk (`names_used`)."""
    calls = [text for name, text in _TO_A_NUMBER.items() if name in used.own and name != "float"]
    return calls + ([_TO_A_NUMBER["float"]] if "float" in used.loaded_by_name else [])


def zeroes_grads(used: NamesUsed) -> bool:
    """Whether the code zeroes or clears a .grad (zero_grad(), .zero_(), `.grad = ...`), following its
    helpers: where two known mistakes leave the same .grad, one that zeroes it is the one this code makes.
    `used` is the code's one walk (`names_used`)."""
    return used.stores_grad or bool(used.own & {"zero_grad", "zero_"})


def takes_absolute_values(used: NamesUsed) -> bool:
    """Whether the code takes an absolute value (.abs(), torch.abs, abs()), following its helpers: where
    a wrong result is one an absolute value gives, among other mistakes that give it, that is the one this
    code makes. `used` is the code's one walk (`names_used`)."""
    return bool(used.own & {"abs", "abs_", "absolute"}) or "abs" in used.loaded_by_name


# Calls that change a tensor's shape, as the feedback spells them.
_RESHAPING = {
    "squeeze": "`.squeeze()`",
    "unsqueeze": "`.unsqueeze()`",
    "reshape": "`.reshape()`",
    "view": "`.view()`",
    "flatten": "`.flatten()`",
    "sum": "`.sum()`",
    "mean": "`.mean()`",
}


def reshaping_calls(used: NamesUsed) -> list[str]:
    """The calls that change a tensor's shape that the code makes, following its helpers, where it takes
    a gradient by torch.autograd.grad: a result of the wrong shape then comes from one of them. `used` is
    the code's one walk (`names_used`)."""
    names = used.own
    if "autograd" not in names:
        return []
    return [text for name, text in _RESHAPING.items() if name in names]


def where_it_saves(function: type[torch.autograd.Function]) -> str:
    """Where the Function fills ctx, to name in a message: setup_context if it has its own, else forward.
    Neither records a graph."""
    return (
        "setup_context" if function.setup_context is not torch.autograd.Function.setup_context else "forward"
    )


# Calls that copy a tensor's values without its history or its tangent, in the order a message names them.
COPIES = {name: _CUTTING_CALLS[name] for name in ("detach", "data")} | {"clone": "`.clone()`"}


def copies_it_saves(function: type[torch.autograd.Function]) -> list[str]:
    """The copying calls (COPIES) in the code of where the Function fills ctx: a tensor saved through one
    of them has no history, and its code tells which one, where the saved tensor alone cannot."""
    used = names_used(getattr(function, where_it_saves(function))).everywhere
    return [text for name, text in COPIES.items() if name in used]


# Calls whose result, returned in place of the tensor forward saved, leaves that tensor no output: the
# copies, and view_as, whose view shares its memory but is a tensor of its own. Not .view() or .reshape(),
# with which a forward often returns a new result in its input's shape.
_RETURNED_IN_ITS_PLACE = COPIES | {"view_as": "`.view_as()`"}


def copies_returned(function: type[torch.autograd.Function]) -> list[str]:
    """The copying or viewing calls (_RETURNED_IN_ITS_PLACE) that forward makes in its return statements
    and in no call of save_for_backward: forward then returns the copy or view and saves the tensor itself,
    which, not being an output, has no history; where forward saves a copy, or makes it on a line of its
    own, the code does not tell, and nothing is returned."""
    code = getattr(function.forward, "__code__", None)
    if code is None:
        return []
    instructions = list(dis.get_instructions(code))
    saves, returns = _saves_and_returns(instructions)
    copied = [
        i
        for i in instructions
        if i.opname in {"LOAD_METHOD", "LOAD_ATTR"} and i.argval in _RETURNED_IN_ITS_PLACE
    ]
    if any(_within(copy, save) for copy in copied for save in saves):
        return []
    names = {copy.argval for copy in copied if any(_within(copy, end) for end in returns)}
    return [text for name, text in _RETURNED_IN_ITS_PLACE.items() if name in names]


def _saves_and_returns(
    instructions: list[dis.Instruction],
) -> tuple[list[dis.Instruction], list[dis.Instruction]]:
    """forward's calls of ctx.save_for_backward and its return statements: what a tensor made inside
    either is, the saved tensor or the returned one, tells a copy saved from a copy returned."""
    saves = [
        instructions[call]
        for n, instruction in enumerate(instructions)
        if instruction.opname in {"LOAD_METHOD", "LOAD_ATTR"} and instruction.argval == "save_for_backward"
        for call in [_call_of(instructions, n)]
        if call is not None
    ]
    returns = [instruction for instruction in instructions if instruction.opname == "RETURN_VALUE"]
    return saves, returns


def computed_in_forward(function: type[torch.autograd.Function]) -> tuple[list[str], list[str]]:
    """The calls (`torch.exp()`) and operators (`*`) that forward's code runs inside its calls of
    ctx.save_for_backward, and those it runs in its return statements: either way the tensor saved is
    not the tensor returned."""
    code = getattr(function.forward, "__code__", None)
    if code is None:
        return [], []
    instructions = list(dis.get_instructions(code))
    saves, returns = _saves_and_returns(instructions)
    made = [
        (instruction, text) for n, instruction in enumerate(instructions) if (text := _made(instructions, n))
    ]
    return (
        _distinct(text for instruction, text in made if any(_within(instruction, save) for save in saves)),
        _distinct(text for instruction, text in made if any(_within(instruction, end) for end in returns)),
    )


def _made(instructions: list[dis.Instruction], n: int) -> str:
    """How instructions[n] makes a new tensor, in a message's words: an operator (`*`) or a method called
    (`torch.exp()`, `.mul()`), with the module it is read from; '' for any other instruction."""
    instruction = instructions[n]
    if instruction.opname == "BINARY_OP":
        return f"`{instruction.argrepr.rstrip('=')}`"
    if instruction.opname != "LOAD_METHOD" or instruction.argval == "save_for_backward":
        return ""
    path = [instruction.argval]
    for before in reversed(instructions[:n]):
        if before.opname == "LOAD_ATTR":
            path.insert(0, before.argval)
            continue
        if before.opname == "LOAD_GLOBAL":
            path.insert(0, before.argval)
        else:
            path.insert(0, "")
        break
    return f"`{'.'.join(path)}()`"


def _distinct(texts) -> list[str]:
    """texts without repeats, in their order."""
    return list(dict.fromkeys(texts))


def _within(inner: dis.Instruction, outer: dis.Instruction) -> bool:
    """Whether the source inner runs for lies inside the source outer runs for."""
    i, o = inner.positions, outer.positions
    return (o.lineno, o.col_offset) <= (i.lineno, i.col_offset) and (i.end_lineno, i.end_col_offset) <= (
        o.end_lineno,
        o.end_col_offset,
    )


def attribute_holding(node, tensor: torch.Tensor) -> str | None:
    """The name of the attribute of ctx (`node`, a custom Function's node) that holds `tensor`'s memory
    (ctx.x = x, ctx.result = output.data), where autograd's version check cannot see a change in place."""
    held = tensor.untyped_storage().data_ptr()
    for name, value in _kept_on_ctx(node).items():
        if value.untyped_storage().data_ptr() == held:
            return name
    return None


def attributes_keeping(node, tensors: list[torch.Tensor]) -> list[str]:
    """The names of the attributes of ctx (`node`, a custom Function's node) holding one of `tensors`
    itself, alone or in a tuple, list or dict: kept so, an output holds its grad_fn, which is ctx, and ctx
    holds the output, a reference cycle that outlives the caller's last reference to it."""
    return [
        name
        for name, value in sorted(getattr(node, "__dict__", {}).items())
        if any(held is tensor for held in tensors_in(value) for tensor in tensors)
    ]


def _kept_on_ctx(node) -> dict[str, torch.Tensor]:
    """The tensors a custom Function's node (its ctx) kept as plain attributes, by attribute name."""
    return {
        name: value
        for name, value in sorted(getattr(node, "__dict__", {}).items())
        if isinstance(value, torch.Tensor)
    }


def _copies_of_inputs(node) -> list[str]:
    """The attributes of ctx (`node`) holding a leaf input's memory without being that input: its
    `.detach()` or `.data`, which share the memory and drop the history."""
    leaves = [getattr(edge, "variable", None) for edge, _ in node.next_functions]
    held = {leaf.untyped_storage().data_ptr(): leaf for leaf in leaves if isinstance(leaf, torch.Tensor)}
    return [
        name
        for name, value in _kept_on_ctx(node).items()
        if (leaf := held.get(value.untyped_storage().data_ptr())) is not None and value is not leaf
    ]


def _why_no_history(copies: list[str], where: str) -> str:
    """Why each copying call (COPIES) in where's code gave a tensor without history: `.detach()` and
    `.data` cut it anywhere; `.clone()` only where autograd does not record, as where a Function saves."""
    why = []
    cuts = [copy for copy in copies if copy != COPIES["clone"]]
    if cuts:
        verb = "gives" if len(cuts) == 1 else "give"
        why.append(f"{' and '.join(cuts)} {verb} the values without their history")
    if COPIES["clone"] in copies:
        why.append(f"{where} runs with gradients off, so even a copy by `.clone()` has no history")
    return "; ".join(why)


def cut_from_graph(output: torch.Tensor) -> str:
    """Why grad_x came out of backward disconnected from x, from the most to the least specific."""
    cls = function_class(output)
    if cls is None:
        return "Likely cause: the gradient was computed from tensors autograd did not record."
    where = where_it_saves(cls)
    kept = list(_kept_on_ctx(output.grad_fn))
    if detached := _copies_of_inputs(output.grad_fn):
        listed = ", ".join(f"ctx.{name}" for name in detached)
        holds, it = ("holds", "it") if len(detached) == 1 else ("hold", "each")
        return (
            f"Likely cause: {listed} {holds} a detached copy of an input (`.detach()` or `.data`): {it} has "
            "the input's values without its history, so backward's result built from it cannot be "
            "differentiated again. Keep the input itself, with ctx.save_for_backward."
        )
    if kept:
        listed = ", ".join(f"ctx.{name}" for name in kept)
        kind = "plain attributes" if len(kept) > 1 else "a plain attribute"
        return (
            f"Likely cause: {where} kept {listed} as {kind}. {where} runs without recording "
            "a graph, so a tensor it computed carries no history, and backward's result built from it "
            "cannot be differentiated again. Save inputs and outputs with ctx.save_for_backward; "
            "return an intermediate as an extra output (and save that)."
        )
    if _saved_without_history(output):
        copies = copies_it_saves(cls)
        returned = copies_returned(cls) if where == "forward" else []
        if returned:
            return (
                f"Likely cause: forward returns a tensor made with {' and '.join(returned)} in place of a "
                "tensor it saved, so the saved tensor is no longer an output: forward runs with gradients "
                "off, and only what it returns gets a history. Return the very tensors you save."
            )
        if where == "forward" and _view_of_saved(output):
            return (
                "Likely cause: forward returns a view of a tensor it saved (made with `.reshape()` or "
                "`.view()`, say) in place of that tensor, so the saved tensor is no longer an output: "
                "forward runs with gradients off, and only what it returns gets a history. Return the very "
                "tensors you save."
            )
        saving, returning = computed_in_forward(cls) if where == "forward" else ([], [])
        if saving and not copies:
            return (
                f"Likely cause: forward saved a tensor with no history, computed with {' and '.join(saving)} "
                "inside ctx.save_for_backward(...): forward runs with gradients off, and only what it "
                "returns gets a history. Save the inputs and outputs themselves."
            )
        if returning and not copies:
            return (
                f"Likely cause: forward returns a new tensor, computed with {' and '.join(returning)} in its "
                "return statement, in place of a tensor it saved, so the saved tensor is no longer an "
                "output: forward runs with gradients off, and only what it returns gets a history. Return "
                "the very tensors you save."
            )
        if copies:
            return (
                f"Likely cause: {where} saved a tensor with no history, made with {' and '.join(copies)}, in "
                f"place of the tensor itself: {_why_no_history(copies, where)}. Save the inputs and outputs "
                "themselves."
            )
        return (
            f"Likely cause: {where} saved a tensor with no history: an intermediate it computed ({where} "
            "records nothing), a tensor's .data, .detach() or .clone() in place of the tensor itself, or a "
            "tensor forward did not return because it returned a new one made from it (`y * 1`, say). Save "
            "the inputs and outputs themselves and return the very tensors you save; return an intermediate "
            "as an extra output and save that very tensor."
        )
    return untracked_in_backward(output) or (
        "Likely cause: backward builds its gradient from tensors autograd did not record. Compute it with "
        f"torch operations on ctx.saved_tensors and {incoming_parameter(function_class(output))} only."
    )


def computed_on_ctx(output: torch.Tensor, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """Why backward's values are right but their derivative is not, where the Function kept on ctx, as a
    plain attribute, a tensor it computed: that tensor has no history, so the terms backward builds
    from it are constants to autograd. None when every tensor kept so is an input or the output."""
    cls = function_class(output)
    if cls is None:
        return None
    where = where_it_saves(cls)
    kept = [
        name
        for name, value in _kept_on_ctx(output.grad_fn).items()
        if not value.requires_grad and not any(value is tensor for tensor in (*inputs, output))
    ]
    if not kept:
        return None
    listed = ", ".join(f"ctx.{name}" for name in kept)
    it, has = ("it", "has") if len(kept) == 1 else ("them", "have")
    return (
        f"Likely cause: {where} computed {listed} and kept {it} on ctx. {where} records no graph, so "
        f"{it} {has} no history, and every term backward builds from {it} is a constant to autograd: its "
        f"derivative is lost. Compute {it} in backward from ctx.saved_tensors, or return {it} as an extra "
        f"output and save {it}."
    )


def untracked_in_backward(output: torch.Tensor) -> str | None:
    """Why the backward of the Function behind `output` is not all recorded, where its code tells: a
    decorator, NumPy or a call that leaves the graph. None when its code shows none of them."""
    cls = function_class(output)
    if cls is None:
        return None
    # functools.wraps gives the decorator's wrapper the backward's names; its code keeps its own.
    incoming = incoming_parameter(cls)
    code = getattr(cls.backward, "__code__", None)
    applied = _other_functions_applied(cls)
    if code is not None and code.co_qualname.startswith("once_differentiable."):
        fix = (
            f"Remove the decorator: autograd then records the call to {' or '.join(applied)}.apply and "
            "differentiates it with that Function's backward."
            if applied
            else "Remove the decorator: a backward made of torch operations on ctx.saved_tensors and "
            f"{incoming} is differentiable as it is."
        )
        return (
            "Likely cause: backward is marked @once_differentiable, which runs it under torch.no_grad() "
            f"and so refuses a second derivative. {fix}"
        )
    used = names_used(cls.backward)
    # In backward, a new leaf cuts grad_x from the saved tensors as surely as .detach() alone.
    names = used.own | ({"detach"} if _FRESH_LEAF in used.own else set())
    cutting = [text for name, text in _CUTTING_CALLS.items() if name in names]
    if used.numpy_own:
        # In the order values leave torch and come back, as in `.detach().numpy()` then torch.tensor(...);
        # a module named numpy is no `.numpy()` call. How torch.tensor(...) copies is beside the point here.
        method = "numpy" in used.own and "numpy" not in used.loaded_by_name
        out = [text for name, text in _CUTTING_CALLS.items() if name in names and name != "tensor"]
        calls = " and ".join([*out, "`.numpy()`"] if method else out)
        if "tensor" in names:
            calls = f"{calls}, then `torch.tensor(...)`" if calls else "`torch.tensor(...)`"
        if not _numpy_in_own_code(cls.backward) and not _wraps_a_backward(cls):
            uses = f" (it uses {calls})" if calls else ""
            return (
                f"Likely cause: backward calls a NumPy kernel, which autograd cannot record{uses}: wrap it "
                "in a second torch.autograd.Function whose own backward gives the kernel's derivative, and "
                "call that Function's .apply from backward. Rewrite it with torch operations on "
                f"ctx.saved_tensors and {incoming} only if its formula has a torch version and the exercise "
                "allows it."
            )
        taken = f"takes the values out of torch ({calls})" if calls else "takes the values out of torch"
        return (
            f"Likely cause: backward computes with NumPy: it {taken}, so its result has no history. Compute "
            f"the gradient with torch operations on ctx.saved_tensors and {incoming}. A NumPy kernel that "
            "must stay needs a torch.autograd.Function of its own, whose backward gives its derivative."
        )
    if cutting:
        # torch.no_grad() cuts no tensor: autograd records nothing under it.
        how = "which cuts the graph: what backward computes from the cut tensor has no path back to it"
        if cutting == [_CUTTING_CALLS["no_grad"]]:
            how = "under which autograd records none of backward's operations: the gradient has no graph"
        return (
            f"Likely cause: backward uses {', '.join(cutting)}, {how}, so autograd cannot differentiate it "
            "again. "
            + (
                _pass_themselves(applied, incoming)
                if applied
                else "Compute the gradients with ordinary torch operations on ctx.saved_tensors and "
                f"{incoming}."
            )
        )
    return None


def _other_functions_applied(cls) -> list[str]:
    """The other Functions of the notebook whose names backward's own code loads (CubeBackward in
    Cube.backward): a backward that hands its work to one is fixed by giving it the tensors themselves,
    not by computing in torch what the Function stands for."""
    backward = inspect.unwrap(cls.backward)
    code = getattr(backward, "__code__", None)
    if code is None:
        return []
    values = [backward.__globals__.get(name) for name in code.co_names]
    return [
        value.__name__
        for value in values
        if isinstance(value, type) and issubclass(value, torch.autograd.Function) and value is not cls
    ]


def _pass_themselves(applied: list[str], incoming: str) -> str:
    """The fix for a backward that calls `applied` and cut its graph on the way: autograd records a call
    to a Function's .apply made with gradients on and differentiates it through that Function's backward."""
    calls = " or ".join(f"{name}.apply" for name in applied)
    backwards = " and ".join(f"{name}.backward" for name in applied)
    return (
        f"Pass {incoming} and the saved tensors themselves to {calls}, with no .detach(), torch.no_grad() "
        f"or decorator: autograd records that call and differentiates it with {backwards}."
    )


def incoming_parameter(cls) -> str:
    """What backward calls the gradient it receives, its argument after ctx: `grad_grad_x` in a Function
    that is itself a backward, where `grad_out` is a saved input; `grad_out` when it cannot be read."""
    try:
        parameters = list(inspect.signature(cls.backward).parameters)
    except (TypeError, ValueError, AttributeError):  # no class, or a backward inspect cannot read
        return "grad_out"
    return parameters[1] if len(parameters) > 1 else "grad_out"


def _wraps_a_backward(cls) -> bool:
    """Whether the Function's first input is named grad_out: it is then itself another Function's backward,
    the wrapper lesson 04 builds, whose own backward is written in torch rather than wrapped again."""
    try:
        parameters = [name for name in inspect.signature(cls.forward).parameters if name != "ctx"]
    except (TypeError, ValueError):  # a forward inspect cannot read says nothing either way
        return False
    return parameters[:1] == ["grad_out"]


def _numpy_in_own_code(function) -> bool:
    """Whether `function`'s own code, not a function it calls, names NumPy: NumPy reached only through a
    call is a kernel, code to wrap rather than rewrite in torch."""
    names = function.__code__.co_names
    modules = [function.__globals__.get(name) for name in names]
    return "numpy" in names or any(
        isinstance(module, types.ModuleType) and module.__name__.split(".")[0] == "numpy"
        for module in modules
    )


def saved_inputs(output: torch.Tensor, inputs: tuple[torch.Tensor, ...], names: list[str]) -> list[str]:
    """The names of the inputs that the Function behind `output` kept for backward, with
    save_for_backward or as ctx attributes: a factor left out of a formula is then a slip in backward,
    not a tensor forward failed to save."""
    node = output.grad_fn
    if function_class(output) is None:
        return []
    try:
        kept = list(node.saved_tensors)
    except RuntimeError:  # freed by an earlier backward
        kept = []
    kept += [value for value in vars(node).values() if isinstance(value, torch.Tensor)]
    return [name for name, x in zip(names, inputs, strict=True) if any(t is x for t in kept)]


def _view_of_saved(output: torch.Tensor) -> bool:
    """True when the output is a view sharing the memory of a tensor its Function saved without history:
    forward saved a tensor and returned a view of it (`.reshape()`, `.view()`), which alone got the node."""
    held = output.untyped_storage().data_ptr()
    return output._base is not None and any(
        not t.requires_grad and t.untyped_storage().data_ptr() == held for t in output.grad_fn.saved_tensors
    )


def _saved_without_history(output: torch.Tensor) -> bool:
    """True when the Function's saved tensors include one cut off from the graph the output is on."""
    try:
        saved = output.grad_fn.saved_tensors
    except (AttributeError, RuntimeError):  # not a custom Function, or freed by an earlier backward
        return False
    return output.requires_grad and any(not t.requires_grad for t in saved)


def intermediates_not_returned(output: torch.Tensor) -> str | None:
    """A hint for a Function that returns fewer outputs than asked, where it saved tensors that are
    neither its inputs nor its outputs: intermediates, which only returning them gives a history."""
    cls = function_class(output)
    try:
        saved = output.grad_fn.saved_tensors if cls is not None else ()
    except (AttributeError, RuntimeError):  # freed by an earlier backward
        return None
    count = sum(1 for t in saved if t.grad_fn is None and not t.requires_grad)
    if not count:
        return None
    where = where_it_saves(cls)
    them = "it" if count == 1 else "them"
    return (
        f"Likely cause: {where} saves {count} tensor{'s' * (count > 1)} it computed and does not return "
        f"{them}. {where} records nothing, so an intermediate gets a history only as an output: return "
        f"{them} as extra outputs too, the very tensors you save, and give backward one gradient argument "
        "per output, adding each extra output's gradient times that output's derivative."
    )


def changes_outputs_in_backward(outputs: tuple, inputs: tuple[torch.Tensor, ...]) -> bool:
    """True when running backward changes the version of an output: backward wrote into it in place."""
    tensors = [o for o in outputs if isinstance(o, torch.Tensor) and o.requires_grad]
    versions = [t._version for t in tensors]
    try:
        torch.autograd.grad(tensors, inputs, [torch.ones_like(t) for t in tensors], allow_unused=True)
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return False
    return any(t._version != v for t, v in zip(tensors, versions, strict=True))


def backward_float_bits(output) -> list | None:
    """The bits of the floating dtypes of what the custom Function behind `output` returns from backward
    (None for anything else), read before autograd casts each gradient to its input's dtype: a float32
    gradient of a float64 input arrives as float64, right to float32 rounding, while the derivatives taken
    through it are rounded. None where `output` is not a custom Function's single output, or its backward
    raises."""
    node = output.grad_fn if isinstance(output, torch.Tensor) else None
    if not isinstance(node, torch.autograd.function.BackwardCFunction):
        return None
    try:
        with torch.no_grad():
            result = node.apply(torch.ones_like(output))
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return None
    return [
        torch.finfo(r.dtype).bits if isinstance(r, torch.Tensor) and r.dtype.is_floating_point else None
        for r in _as_tuple(result)
    ]


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def non_differentiable_extras(output: torch.Tensor, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """A hint when the Function behind `output` returns extra outputs it marked non-differentiable,
    though they depend on x (seen even when a wrapper passes on the first output alone)."""
    cls = function_class(output)
    try:
        outputs = cls.apply(*inputs) if cls is not None else ()
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return None
    tensors = [o for o in outputs if isinstance(o, torch.Tensor)] if isinstance(outputs, tuple) else []
    if len(tensors) < 2 or not tensors[0].requires_grad or all(o.requires_grad for o in tensors[1:]):
        return None
    return (
        "Likely cause: forward marks its extra outputs non-differentiable (ctx.mark_non_differentiable), "
        "so no gradient flows through them; but they depend on x, and the gradients that reach them "
        "are part of grad_x. Mark only outputs that truly carry no gradient, such as indices or masks."
    )


# Default autograd turns an undefined incoming gradient into zeros before backward sees it: only a
# Function that does not materialize its gradients can meet None there.
COMPUTED_WITH_NONE = (
    "\nLikely cause: backward computes with an incoming gradient that is None: after "
    "ctx.set_materialize_grads(False), autograd passes None, not zeros, for the gradient of an output nobody "
    "used. Check for None first: a term whose gradient is None is zero, so leave it out, and return None "
    "for what depends on None gradients alone."
)


def none_met_unmaterialized(error: Exception, output) -> str:
    """COMPUTED_WITH_NONE where backward failed on a None operand and the Function behind `output` calls
    ctx.set_materialize_grads (to turn it off: on is the default), or ''. A None from elsewhere, such as an
    unfilled .grad, keeps the general hints."""
    if not (isinstance(error, TypeError | AttributeError) and "NoneType" in str(error)):
        return ""
    cls = function_class(output) if isinstance(output, torch.Tensor) else None
    if cls is None:
        return ""
    rules = (cls.forward, getattr(cls, "setup_context", None))
    if any("set_materialize_grads" in names_used(rule).everywhere for rule in rules if rule is not None):
        return COMPUTED_WITH_NONE
    return ""


def ignored_extra_outputs(
    output: torch.Tensor, inputs: tuple[torch.Tensor, ...], returned: int
) -> str | None:
    """A hint when the Function behind `output` returns extra outputs whose gradients backward drops.
    `returned` counts the outputs the function under test returned: fewer than the Function's, as from a
    wrapper, and the check's random gradients never reach the extra ones."""
    cls = function_class(output)
    if cls is None:
        return None
    try:
        outputs = cls.apply(*inputs)
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return None
    if not isinstance(outputs, tuple) or len(outputs) < 2:
        return None
    extras = [o for o in outputs[1:] if isinstance(o, torch.Tensor) and o.requires_grad]
    if not extras:
        return None
    try:
        grads = torch.autograd.grad(extras, inputs, [torch.ones_like(o) for o in extras], allow_unused=True)
    except Exception:  # noqa: BLE001 - as above
        return None
    if all(is_zero(g) for g in grads):
        as_here = ", as this check's random gradients do" if returned == len(outputs) else ""
        return (
            f"Likely cause: {cls.__name__}.backward ignores the gradients that arrive for its extra outputs "
            "(the arguments after the first grad_out). Gradient reaches those outputs whenever something "
            f"uses them{as_here}, and in a second backward even when nothing does, so backward must add "
            "their contributions to grad_x."
        )
    return None


def one_tensor_twice(outputs: tuple, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """A hint when two outputs of a Function are one tensor that forward changed in place (its version
    moved): forward computed one output into another and returned it twice, so the values it saved and
    returned are not what it computed.
    A wrapper's single output is traced to its Function, which is applied again to see all its outputs,
    only where that Function has more outputs than the one returned: a check measures every sample this way,
    and a one-output Function has nothing hidden."""
    first = outputs[0] if outputs else None
    cls = function_class(first) if isinstance(first, torch.Tensor) else None
    try:
        if len(outputs) == 1 and cls is not None and len(first.grad_fn._input_metadata) > 1:
            outputs = cls.apply(*_fresh(inputs))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [
            (i, j)
            for (i, a), (j, b) in itertools.combinations(enumerate(outputs), 2)
            if isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a._version > 0
            and (a is b or (a.numel() > 0 and _same_elements(a, b)))
        ]
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return None
    if not pairs:
        return None
    i, j = pairs[0]
    owner = f"{cls.__name__}.forward" if cls is not None else "forward"
    return (
        f"Likely cause: outputs {i} and {j} of {owner} are one tensor: forward changed a tensor in place "
        "after computing it (.sub_(), .div_() and the like return the very tensor they change) and returned "
        "it twice, so both outputs hold the last value, and so does whatever forward saved of it. Compute "
        "each output into a new tensor: a - b, not a.sub_(b)."
    )


def _same_elements(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors are views of the very same elements, not two parts of one storage."""
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()


def wrong_output_term(output: torch.Tensor, inputs: tuple[torch.Tensor, ...]) -> str | None:
    """A hint naming the output whose term in backward is wrong, for a Function of several outputs.

    backward adds one term per output: the gradient arriving for that output times its derivative. A
    gradient sent into one output alone isolates its term, which central differences of that output
    check, as gradcheck would; a term with its sign flipped or left out is then named by the argument
    backward receives it in.
    """
    cls = function_class(output)
    try:
        outputs = cls.apply(*_fresh(inputs)) if cls is not None else ()
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return None
    if not isinstance(outputs, tuple) or len(outputs) < 2:
        return None
    names = _incoming_names(cls, len(outputs))
    faults = []
    for index, out in enumerate(outputs):
        if not (isinstance(out, torch.Tensor) and out.requires_grad and out.dtype == torch.float64):
            continue
        try:
            by_backward, by_differences = _term_and_differences(cls, inputs, index)
        except Exception:  # noqa: BLE001 - as above
            return None
        if fault := _fault(by_backward, by_differences):
            faults.append((index, fault))
    if faults and _right_with_saved_reversed(cls, inputs, outputs):
        return (
            f"Likely cause: {cls.__name__}.backward uses each of the two tensors forward saved where the "
            "other belongs (with them swapped, every term of backward is right): either it unpacks "
            "ctx.saved_tensors in another order than it passed them to ctx.save_for_backward, or its terms "
            "multiply each output's gradient by the other tensor. Check both: unpack in the order you "
            "saved, and multiply each output's gradient by that output's own derivative."
        )
    if not faults:
        return None
    # Every wrong term at once, so that fixing one does not leave another to a second run.
    terms = ", and ".join(
        f"the term of {names[index]}, the gradient of output {index}, {fault}" for index, fault in faults
    )
    if len(faults) == 1:
        index = faults[0][0]
        unused = ", even if nobody uses that output" if index else ""
        rule = f"that gradient times the derivative of output {index}, sign included{unused}"
    else:
        unused = ", even if nobody uses them" if any(index for index, _ in faults) else ""
        rule = f"each of those gradients times the derivative of its output, sign included{unused}"
    return f"Likely cause: in {cls.__name__}.backward, {terms}. backward must add {rule}."


def _right_with_saved_reversed(cls: type, inputs: tuple[torch.Tensor, ...], outputs: tuple) -> bool:
    """Whether backward, handed the two tensors forward saved in the other order, gets every output's term
    right: then the order it unpacks them in is the slip, not a formula."""
    try:
        if len(outputs[0].grad_fn.saved_tensors) != 2:
            return False
        terms = [_term_and_differences(cls, inputs, index, swapped=True) for index in range(len(outputs))]
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return False
    return all(_fault(*term) is None for term in terms)


class _SavedReversed:
    """A Function's node, as backward reads it as ctx, whose saved_tensors come back in reverse order."""

    def __init__(self, node) -> None:
        self._node = node

    def __getattr__(self, name: str):
        return getattr(self._node, name)

    @property
    def saved_tensors(self) -> tuple:
        return self._node.saved_tensors[::-1]


def _fresh(inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    return [x.detach().clone().requires_grad_() for x in inputs]


def _incoming_names(cls: type, count: int) -> list[str]:
    """The names backward gives the gradients of the outputs: its parameters after ctx, if one each."""
    try:
        parameters = list(inspect.signature(cls.backward).parameters.values())[1:]
    except (TypeError, ValueError):
        parameters = []
    if len(parameters) == count and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters):
        return [p.name for p in parameters]
    return [f"grad_outputs[{index}]" for index in range(count)]


def _term_and_differences(
    cls: type, inputs: tuple[torch.Tensor, ...], index: int, swapped: bool = False
) -> tuple[float, float]:
    """Output `index`'s term of backward, and central differences of that output, both weighted and
    along a direction drawn from a fixed seed, so that one number compares each. With `swapped`, backward
    is called directly, reading its two saved tensors in the other order."""
    gen = torch.Generator().manual_seed(0)
    directions = [torch.randn(x.shape, generator=gen, dtype=x.dtype) for x in inputs]
    leaves = _fresh(inputs)
    outputs = cls.apply(*leaves)
    out = outputs[index]
    weights = torch.randn(out.shape, generator=gen, dtype=out.dtype)
    if swapped:
        fed = [weights if n == index else torch.zeros_like(o) for n, o in enumerate(outputs)]
        with torch.no_grad():
            grads = cls.backward(_SavedReversed(out.grad_fn), *fed)
        grads = grads if isinstance(grads, tuple) else (grads,)
    else:
        grads = torch.autograd.grad(out, leaves, weights, allow_unused=True)
    by_backward = sum(float((g * d).sum()) for g, d in zip(grads, directions, strict=True) if g is not None)
    with torch.no_grad():
        ahead, behind = (
            cls.apply(*(x.detach() + step * d for x, d in zip(inputs, directions, strict=True)))[index]
            for step in (_EPS, -_EPS)
        )
    return by_backward, float(((ahead - behind) / (2 * _EPS) * weights).sum())


def _fault(by_backward: float, by_differences: float) -> str | None:
    """What is wrong with a term, given what central differences say it should be; None if nothing is
    or the differences cannot tell (the output does not change in that direction)."""
    tolerance = 1e-5 * max(1.0, abs(by_differences))
    if abs(by_differences) <= tolerance or abs(by_backward - by_differences) <= tolerance:
        return None
    if abs(by_backward + by_differences) <= tolerance:
        return "has the wrong sign"
    if abs(by_backward) <= tolerance:
        return "is left out"
    return "is wrong"


def returned_for_missing_gradients(outputs: list[torch.Tensor]) -> str:
    """What the Function behind the outputs returns from backward when every gradient it is given is None,
    where that is neither a tensor nor None ('Sinh.backward returned the int 0'); '' otherwise."""
    cls = function_class(outputs[0]) if outputs else None
    if cls is None:
        return ""
    try:
        parameters = list(inspect.signature(cls.backward).parameters.values())[1:]
        if any(p.kind is p.VAR_POSITIONAL for p in parameters):
            return ""
        with torch.no_grad():
            returned = cls.backward(outputs[0].grad_fn, *[None] * len(parameters))
    except Exception:  # noqa: BLE001 - a hint is optional; the failure is reported anyway
        return ""
    wrong = [v for v in (returned if isinstance(returned, tuple) else (returned,)) if not _gradient_like(v)]
    if not wrong:
        return ""
    return f"{cls.__name__}.backward returned the {type(wrong[0]).__name__} {repr(wrong[0])[:40]}"


def _gradient_like(value) -> bool:
    return value is None or isinstance(value, torch.Tensor)


# torch's error for .numpy() on a tensor autograd records.
_NUMPY_OF_RECORDED = "Can't call numpy() on Tensor that requires grad"

# autograd's error for an output of a Function that is a view changed in place: an input returned as-is.
_VIEW_CHANGED_IN_PLACE = "is a view and its base or another view of its base has been modified inplace"

# torch's errors, by words of their first sentence, whose later sentences only give, less precisely, the
# advice of the "Likely cause" line a message adds after them: a graph freed by a first backward, an input
# returned as the output (whose suggested view hides the mistake), and vmap refusing an in-place change of
# a tensor without the batch dimension ("use out-of-place operators"), vmap refusing .item(), a dirty input
# not returned, a saved tensor changed in place (whose anomaly detection the cause makes needless), a
# torch.func transform refusing to change a captured tensor in place (whose rewrite advice the cause gives);
# or advice that points away from the cure: allow_unused=True for a tensor the result was not computed from,
# .detach().numpy() for .numpy() on a tensor autograd records, cloning the output of a Function whose forward
# changed its input in place.
_FIRST_SENTENCE_SAYS_IT = (
    "Trying to backward through the graph a second time",
    "returned as-is as output is being saved for backward",
    "in extra_args that has more elements than `self`",
    "appears to not have been used in the graph",
    "calling .item() on a Tensor",
    _NUMPY_OF_RECORDED,
    "marked as dirty during the forward method were not returned",
    "has been modified by an inplace operation",
    "attempted to call in-place operation",
    _VIEW_CHANGED_IN_PLACE,
)


def quoted(error: Exception) -> str:
    """torch's error as a message quotes it: whole, or only its first sentence where the rest would repeat
    the likely cause that follows it."""
    text = str(error)
    first = text.split(". ", 1)[0]
    if first != text and any(symptom in first for symptom in _FIRST_SENTENCE_SAYS_IT):
        return first + "."
    return text


def known_error_hint(error: Exception) -> str:
    """A "Likely cause" line for autograd's own errors in the mistakes the lessons warn about, or ''."""
    return (
        forward_takes_ctx_beside_setup_context(error)
        or _input_changed_in_place_and_returned(error)
        or _saved_tensors_miscounted(error)
        or _backward_takes_too_few_gradients(error)
        or _saved_tensors_not_unpacked(error)
        or _saves_counted_differently(error)
        or _leaf_changed_in_place_elsewhere(error)
        or _changed_in_place_under_vmap(error)
        or _captured_changed_in_place(error)
        or _converted_to_a_number(error)
        or _taken_out_of_torch(error)
        or _numpy_of_a_recorded_tensor(error)
        or _numpy_scalar_refused(error)
        or _dirty_input_not_returned(error)
        or _jacobian_built(error)
        or _float32_among_float64(error)
        or next((hint for symptom, hint in _ERROR_HINTS.items() if symptom in str(error)), "")
        or _gradients_miscounted(error)
        or _no_batching_rule(error)
    )


def _gradients_miscounted(error: Exception) -> str:
    """Why autograd refused the gradients a backward returned, naming the class whose backward it is:
    the error names the Function's node, its class's name with Backward appended (CubeBackward's node is
    CubeBackwardBackward)."""
    found = re.search(r"function (\w+)Backward returned an incorrect number of gradients", str(error))
    if found is None:
        return ""
    return (
        f"\nLikely cause: {found[1]}.backward (its node is {found[1]}Backward) returns a count of gradients "
        f"other than its forward's inputs. {_ONE_GRADIENT_PER_INPUT}."
    )


def _float32_among_float64(error: Exception) -> str:
    """Why torch refused to multiply tensors of two dtypes, one of them float32: the code made a float32
    tensor (.float(), torch.tensor of a Python float, dtype=torch.float32) among the float64 inputs the
    tests pass, and matrix and vector products take one dtype only."""
    text = str(error)
    if "same dtype" not in text or "float" not in text.lower():
        return ""
    return (
        "\nLikely cause: your code makes a float32 tensor (with .float(), dtype=torch.float32, or "
        "torch.tensor(...) of a value) among the float64 tensors it is given, and torch multiplies "
        "matrices and vectors of one dtype only. Keep every tensor in the inputs' dtype: no .float(), "
        "dtype=x.dtype, x.new_tensor(...)."
    )


# What a forward returns in place of the input it marked dirty, by the calls its code makes, as the
# feedback spells them: a view first, since x.tanh_().view_as(x) also changes x in place.
_NOT_THE_INPUT = {
    "view_as": "a view of it (`.view_as()`)",
    "view": "a view of it (`.view()`)",
    "reshape": "a view of it (`.reshape()`)",
    "clone": "a copy of it (`.clone()`)",
    "detach": "an alias of it (`.detach()`)",
    "data": "an alias of it (`.data`)",
}


def _dirty_input_not_returned(error: Exception) -> str:
    """What forward returned in place of the input it marked dirty, read off its code: nothing (no
    `return`), or a view, copy or alias of that input, none of which is the tensor autograd was told
    changed; '' where the code shows none of them (the table's general line then speaks)."""
    if "marked as dirty during the forward method were not returned" not in str(error):
        return ""
    applied = _function_applied(error)
    code = getattr(getattr(applied, "forward", None), "__code__", None)
    if code is None:
        return ""
    own = names_used(applied.forward).own
    name = code.co_varnames[0] if code.co_argcount else "x"
    returned = (
        "nothing: it has no `return`"
        if _returns_nothing(code)
        else next((text for call, text in _NOT_THE_INPUT.items() if call in own), "")
    )
    if returned:
        return (
            f"\nLikely cause: the input is marked dirty (ctx.mark_dirty), but forward returns {returned}. "
            f"Return {name} itself, the tensor forward changed in place."
        )
    in_place = _in_place_twin(own)
    if not in_place:
        return ""
    return (
        f"\nLikely cause: the input is marked dirty (ctx.mark_dirty), but forward returns a new tensor. "
        f"Change {name} itself in place and return it: `return {name}.{in_place}()`."
    )


def _in_place_twin(own: set[str]) -> str:
    """The in-place form of the one out-of-place tensor call forward makes (tanh for tanh_), so that the
    advice names the exercise's own call; '' where forward makes none, or several."""
    twins = {f"{call}_" for call in own if not call.endswith("_") and hasattr(torch.Tensor, f"{call}_")}
    return twins.pop() if len(twins) == 1 else ""


def _returns_nothing(code: types.CodeType) -> bool:
    """Whether every return of `code` returns None: a function with no `return`, or a bare one."""
    instructions = list(dis.get_instructions(code))
    returns = [i for i, instruction in enumerate(instructions) if instruction.opname.startswith("RETURN_")]
    return bool(returns) and all(
        (instructions[i].opname == "RETURN_CONST" and instructions[i].argval is None)
        or (i > 0 and instructions[i - 1].opname == "LOAD_CONST" and instructions[i - 1].argval is None)
        for i in returns
    )


def _jacobian_built(error: Exception) -> str:
    """Why torch.diag refused its tensor: the rule that raised builds a Jacobian matrix, where a function
    applied element by element needs none. That rule, jvp or backward, is the innermost frame's."""
    if "diag(): Supports 1D or 2D tensors" not in str(error):
        return ""
    diag = (
        "torch.diag makes a matrix from a vector (or takes a matrix's diagonal) and refuses a 0-dim tensor "
        "or one of more dimensions"
    )
    raised_in = _innermost_notebook_code(error)
    if raised_in is not None and raised_in.co_name == "jvp":
        return (
            f"\nLikely cause: jvp builds the Jacobian as a matrix; {diag}. For a function applied element by "
            "element, J·v is the tangent times the derivative, element by element (x_t * ...), for any shape."
        )
    return (
        f"\nLikely cause: {diag}. backward needs no Jacobian matrix for a function applied element by "
        "element: multiply grad_out by the derivative, element by element (grad_out * ...), whatever the "
        "shape."
    )


# torch's errors for a tensor of more than one element made a Python number, by .item() or by float().
_NOT_ONE_ELEMENT = (
    "cannot be converted to Scalar",
    "only one element tensors can be converted to Python scalars",
)
# The calls that make a tensor a Python number, by the name the code that calls them uses.
_TO_A_NUMBER = {"item": "`.item()`", "float": "`float()`"}


def _converted_to_a_number(error: Exception) -> str:
    """Why a tensor could not be made a number: the code that raised calls .item() or float(), which need
    one element, and which would take the value out of the graph anyway, except in forward, which nothing
    records. Only the calls that code makes are named; '' where it makes none."""
    if not any(symptom in str(error) for symptom in _NOT_ONE_ELEMENT):
        return ""
    found = _calls_to_a_number(error)
    if not found:
        return ""
    where, calls = found
    works, takes = ("works", "takes") if len(calls) == 1 else ("work", "take")
    if where == "forward":
        # forward is never recorded: what the number costs there is its shape and, made a tensor again
        # by torch.tensor, its dtype.
        return (
            f"\nLikely cause: forward calls {' and '.join(calls)}, which {works} only on one-element "
            "tensors; and torch.tensor(...) of a Python number is float32, whatever the input's dtype: keep "
            "it a tensor."
        )
    return (
        f"\nLikely cause: {where} calls {' and '.join(calls)}, which {works} only on one-element tensors and "
        f"{takes} the value out of the graph: keep it a tensor."
    )


def _calls_to_a_number(
    error: Exception, making: Callable[[NamesUsed], list[str]] = calls_making_numbers
) -> tuple[str, list[str]] | None:
    """Where `error` was raised, by name, and which of the calls `making` finds that code makes (those of
    _TO_A_NUMBER), or None. That code is the innermost frame of the traceback that is the notebook's,
    neither torch's nor the grader's; else (under torch.func, whose traceback may not reach the rule that
    raised) the rules of the innermost Function applied."""
    student = _innermost_notebook_code(error)
    if student is not None:
        used = NamesUsed()
        used.own = _read(student, used, _OWN, None)
        if calls := making(used):
            return (student.co_name if student.co_name.isidentifier() else "your code"), calls
    applied = _function_applied(error)
    for rule in ("backward", "jvp", "forward", "setup_context") if applied is not None else ():
        if calls := making(names_used(getattr(applied, rule))):
            return rule, calls
    return None


# torch.func's errors for a tensor whose values were read out of torch, and the calls that read them.
_WITHOUT_STORAGE = ("doesn't have storage", "calling .item() on a Tensor")
_OUT_OF_TORCH = {"tolist": _CUTTING_CALLS["tolist"], "numpy": "`.numpy()`", "item": _CUTTING_CALLS["item"]}


def _taken_out_of_torch(error: Exception) -> str:
    """Why torch.func could not read a tensor's values: the code that raised calls .tolist(), .numpy() or
    .item(), named as it calls them; '' where it calls none (the table's general line then speaks)."""
    if not any(symptom in str(error) for symptom in _WITHOUT_STORAGE):
        return ""
    found = _calls_to_a_number(
        error, lambda used: [t for name, t in _OUT_OF_TORCH.items() if name in used.own]
    )
    if not found:
        return ""
    where, calls = found
    return (
        f"\nLikely cause: {where} calls {' and '.join(calls)}, which reads the values out of torch: "
        "under torch.func a tensor wraps a batch or a traced value, not plain numbers, and autograd could "
        "not record the call anyway. Compute with torch operations on the tensors themselves."
    )


def _numpy_of_a_recorded_tensor(error: Exception) -> str:
    """Why torch refused .numpy(): the code reads a recorded tensor's values out of torch. torch's own
    advice, .detach().numpy(), would pass that call but leave what follows it out of the graph."""
    if _NUMPY_OF_RECORDED not in str(error):
        return ""
    found = _calls_to_a_number(error, lambda used: ["`.numpy()`"] if "numpy" in used.own else [])
    where = found[0] if found else "the Function"
    return (
        f"\nLikely cause: {where} calls `.numpy()`, which reads the values out of torch, where autograd "
        "cannot record what is computed from them. Do not call `.detach().numpy()` instead: the result "
        "is cut off from the graph just the same. Compute with torch operations on the tensors themselves."
    )


def _numpy_scalar_refused(error: Exception) -> str:
    """Why torch.from_numpy refused a NumPy scalar: NumPy's arithmetic on a 0-dim array (what .numpy()
    gives for a tensor of shape ()) returns one. In forward, which autograd never records, NumPy is no cut
    to double backward, so torch.as_tensor mends it (torch.func still refuses it, for a Function meant for
    torch.func); anywhere else NumPy cuts what autograd must follow. Where is the notebook's innermost
    frame."""
    if "expected np.ndarray (got numpy." not in str(error):
        return ""
    student = _innermost_notebook_code(error)
    where = student.co_name if student is not None and student.co_name.isidentifier() else "the Function"
    said = (
        f"\nLikely cause: {where} computes in NumPy, whose arithmetic on a 0-dim array (what .numpy() gives "
        "for a tensor of shape ()) returns a NumPy scalar, which torch.from_numpy refuses."
    )
    if where != "forward":
        return (
            f"{said} Autograd cannot record NumPy anyway, so what it computes would be cut off from the "
            "graph: compute with torch operations on the tensors themselves."
        )
    applied = _function_applied(error)
    for_torch_func = (
        applied is not None and applied.setup_context is not torch.autograd.Function.setup_context
    )
    return (
        f"{said} Use torch.as_tensor(...), which takes a NumPy scalar too, or compute with torch. NumPy in "
        "forward does not stop double backward, since autograd records nothing forward computes; NumPy in "
        "backward does: it cuts the gradient off the graph."
        + (" torch.func, though, cannot run a forward that leaves torch." if for_torch_func else "")
    )


def _innermost_notebook_code(error: Exception) -> types.CodeType | None:
    """The code of the innermost frame of `error`'s traceback that is the notebook's, neither torch's nor
    the grader's, or None."""
    student, entry = None, error.__traceback__
    while entry is not None:
        frame = entry.tb_frame
        ours = frame.f_globals.get("__name__", "").startswith("autograder")
        if not ours and not is_library_code(frame.f_code):
            student = frame.f_code
        entry = entry.tb_next
    return student


# Python's error for backward called with more arguments than it takes: ctx and one gradient per output.
_BACKWARD_GIVEN_MORE = re.compile(
    r"(\w+)\.backward\(\) takes (\d+) positional arguments? but (\d+) were given"
)


def _backward_takes_too_few_gradients(error: Exception) -> str:
    """Why autograd's call of backward raised TypeError, where backward takes fewer gradients than forward
    returns outputs, as a backward copied from a Function of one output does: autograd passes ctx and one
    gradient per output, each output's even if nobody uses it."""
    found = _BACKWARD_GIVEN_MORE.search(str(error)) if isinstance(error, TypeError) else None
    if found is None:
        return ""
    name, taken, given = found.group(1), int(found.group(2)) - 1, int(found.group(3)) - 1
    if not 0 <= taken < given:
        return ""
    example = ", ".join(["ctx", "grad_out", *(f"grad_{index}" for index in range(1, given))])
    return (
        "\nLikely cause: autograd calls backward with ctx and one gradient per output of forward, even "
        f"for an output nobody uses: {name}.forward returns {given} outputs, so {name}.backward must take "
        f"{given} gradients, where it takes {taken}. Give it one parameter per output, in forward's order: "
        f"def backward({example})."
    )


def _saved_tensors_miscounted(error: Exception) -> str:
    """Why unpacking ctx.saved_tensors failed, read off the bytecode that raised (the notebook's source is
    not here): the usual cause is a second ctx.save_for_backward call, which replaces what the first saved,
    or none at all; in jvp, what ctx.save_for_forward saved, which is what jvp's ctx.saved_tensors holds."""
    if not isinstance(error, ValueError) or "values to unpack" not in str(error):
        return ""
    entry = error.__traceback__
    while entry is not None and entry.tb_next is not None:
        entry = entry.tb_next
    if entry is None:
        return ""
    # What the failing unpacking unpacked is what the instruction before it loaded.
    loaded = None
    for instruction in dis.get_instructions(entry.tb_frame.f_code):
        if instruction.offset == entry.tb_lasti:
            break
        loaded = instruction
    if loaded is None or loaded.argval != "saved_tensors":
        return ""
    if entry.tb_frame.f_code.co_name == "backward" and (
        nothing := _saved_nothing_for_backward(entry.tb_frame)
    ):
        return nothing
    if entry.tb_frame.f_code.co_name == "jvp":
        return _saved_nothing_for_forward(entry.tb_frame) or (
            "\nLikely cause: in jvp, ctx.saved_tensors holds what ctx.save_for_forward saved, not what "
            "ctx.save_for_backward saved, and jvp unpacks another count. Save every tensor jvp needs in one "
            "ctx.save_for_forward call in setup_context (ctx.save_for_forward(output)), and unpack them in "
            "that order."
        )
    return _unpacked_other_than_saved(entry.tb_frame, loaded, error) or (
        "\nLikely cause: ctx.saved_tensors holds what the last ctx.save_for_backward call saved, and no "
        "more: each call replaces the one before. Save every tensor backward needs in one call, "
        "ctx.save_for_backward(first, second), and unpack them in that order."
    )


def _saved_tensors_not_unpacked(error: Exception) -> str:
    """Why a tuple went where a tensor was expected: a frame on the traceback stores ctx.saved_tensors
    whole in one name (`x = ctx.saved_tensors`), which holds a tuple even when one tensor was saved. The
    error is often raised further in, by code the student did not write (a kernel wrapper), so every frame
    is read, not only the innermost. A tensor times a tuple names no tuple: torch reads the tuple as an
    index, and says so."""
    if not isinstance(error, (AttributeError, TypeError)) or not any(
        symptom in str(error) for symptom in _A_TUPLE_USED_AS_A_TENSOR
    ):
        return ""
    entry = error.__traceback__
    while entry is not None:
        instructions = dis.get_instructions(entry.tb_frame.f_code)
        for loaded, stored in itertools.pairwise(instructions):
            if loaded.argval == "saved_tensors" and stored.opname in _STORES:
                name = stored.argval
                return (
                    f"\nLikely cause: `{name} = ctx.saved_tensors` keeps the whole tuple, even when one "
                    f"tensor was saved: unpack it, `({name},) = ctx.saved_tensors`."
                )
        entry = entry.tb_next
    return ""


# What torch says where a tuple was given for a tensor: named, or read as an index (`grad_out * saved`).
_A_TUPLE_USED_AS_A_TENSOR = ("tuple", "only integer tensors of a single element can be converted to an index")
# The instructions that store a value in one name, unpacking nothing.
_STORES = ("STORE_FAST", "STORE_DEREF", "STORE_NAME")


# The call that saves each rule's tensors, and each rule's other rule, by the names of the rules.
_SAVE_CALL = {"backward": "ctx.save_for_backward", "jvp": "ctx.save_for_forward"}
_OTHER_RULE = {"backward": "jvp", "jvp": "backward"}
# The fix where backward reads a ctx attribute, and nothing was saved for it.
_CALL_SAVE_FOR_BACKWARD = (
    "Where ctx.save_for_backward is not called at all (a ctx attribute instead), call it: backward reads "
    "what it needs from ctx.saved_tensors."
)


def _saves_counted_differently(error: Exception) -> str:
    """Why torch.func found no batch dimension for a saved tensor: the two save calls were given different
    numbers of tensors, and the one called last recorded the batch dimensions for both rules. The counts
    saved come from the frame of the rule torch.func generated; what each rule unpacks, from its code."""
    if "flat_bdims must not be None" not in str(error):
        return ""
    differ = (
        "\nLikely cause: ctx.save_for_backward and ctx.save_for_forward were given different numbers of "
        "tensors"
    )
    fix = (
        "call ctx.save_for_forward first, or give both calls the same number of tensors (a rule need not "
        "read all saved for it)."
    )
    found = _save_counts(error)
    if found is None:
        return f"{differ}. {_CALL_SAVE_FOR_BACKWARD} Otherwise {fix}"
    function, saved, last = found
    where = where_it_saves(function)
    if "save_for_backward" not in names_used(getattr(function, where)).own:
        return (
            f"\nLikely cause: {where} saves 0 tensors for backward (it never calls ctx.save_for_backward) "
            f"and {saved['jvp']} for jvp, and under torch.func the two counts must match. "
            f"{_CALL_SAVE_FOR_BACKWARD}"
        )
    read = {name: _unpacked_count(getattr(function, name)) for name in ("backward", "jvp")}
    reads = " and ".join(f"{name} unpacks {count}" for name, count in read.items() if count is not None)
    return (
        f"{differ}: {where} saves {_tensors(saved['backward'])} for backward and {saved['jvp']} for jvp, "
        f"with {_SAVE_CALL[last]} called last{f' ({reads})' if reads else ''}. Under torch.func, the save "
        f"call made last sets how both rules' tensors are batched: {fix}"
    )


def _save_counts(error: Exception) -> tuple[type, dict[str, int], str] | None:
    """The Function, how many tensors each of its rules had saved, and the rule whose save call came last,
    read off the innermost frame of a rule torch.func generated from it (its locals hold the Function,
    ctx, and the key to the batch dimensions the last save call recorded); None where there is none."""
    frame, entry = None, error.__traceback__
    while entry is not None:
        here = entry.tb_frame
        if here.f_code.co_name in _SAVE_CALL and {"ctx", "key", "autograd_function"} <= set(here.f_locals):
            frame = here
        entry = entry.tb_next
    if frame is None:
        return None
    rule, found = frame.f_code.co_name, frame.f_locals
    other = _OTHER_RULE[rule]
    try:
        own = len(found["ctx"].saved_tensors)
        recorded = len(found["ctx"]._pt_saved_tensors_bdims_stack[found["key"]])
    except (AttributeError, KeyError, RuntimeError):
        return None
    if own == recorded:
        return None
    return found["autograd_function"], {rule: own, other: recorded}, other


def _tensors(count: int) -> str:
    """A count of tensors in words: 1 tensor, 2 tensors."""
    return f"{count} tensor" if count == 1 else f"{count} tensors"


def _unpacked_count(rule) -> int | None:
    """How many tensors `rule`'s code unpacks from ctx.saved_tensors (`a, b = ctx.saved_tensors`); None
    where its code cannot be read or it reads them otherwise (by index)."""
    code = getattr(rule, "__code__", None)
    if code is None:
        return None
    instructions = list(dis.get_instructions(code))
    for loaded, following in itertools.pairwise(instructions):
        if loaded.argval == "saved_tensors" and following.opname == "UNPACK_SEQUENCE":
            return following.arg
    return None


def _unpacked_other_than_saved(frame: types.FrameType, loaded: dis.Instruction, error: Exception) -> str:
    """Why backward's unpacking failed where the Function calls ctx.save_for_backward once: no call
    replaced another, backward unpacks a count other than that call saved. The unpacked names come from
    the bytecode after `loaded`, the saved count from ctx itself; '' where either cannot be read."""
    function = _function_running(frame)
    counted = re.search(r"expected (\d+)", str(error))
    if function is None or counted is None:
        return ""
    saving = getattr(function, where_it_saves(function)).__code__
    calls = [i for i in dis.get_instructions(saving) if i.argval == "save_for_backward"]
    try:
        saved = len(frame.f_locals["ctx"].saved_tensors)
    except (KeyError, RuntimeError):
        return ""
    unpacked = int(counted.group(1))
    if len(calls) != 1 or saved == unpacked:
        return ""
    tensors = "tensor" if unpacked == 1 else "tensors"
    if saved < unpacked:
        return (
            f"\nLikely cause: backward unpacks {unpacked} {tensors} but ctx.save_for_backward saved {saved}: "
            "save every tensor backward unpacks in that one call, in the order it unpacks them."
        )
    names = _names_stored_after(frame.f_code, loaded)[:unpacked] + ["_"] * (saved - unpacked)
    return (
        f"\nLikely cause: backward unpacks {unpacked} {tensors} but ctx.save_for_backward saved {saved}: "
        f"unpack as many as it saved (`{', '.join(names)} = ctx.saved_tensors`), or save only what backward "
        "needs."
    )


def _names_stored_after(code: types.CodeType, loaded: dis.Instruction) -> list[str]:
    """The local names the unpacking after `loaded` stores into, in order."""
    after = [i for i in dis.get_instructions(code) if i.offset > loaded.offset]
    names = []
    for instruction in after[1:]:
        if instruction.opname != "STORE_FAST":
            break
        names.append(instruction.argval)
    return names


def _saved_nothing_for_backward(frame: types.FrameType) -> str:
    """Why backward found nothing in ctx.saved_tensors, where the Function's code never calls
    ctx.save_for_backward: a second call did not replace a first one, there is none. When it calls
    ctx.save_for_forward instead, that is the slip: what it saves feeds jvp alone. '' where the code
    does call save_for_backward, or the Function cannot be found."""
    function = _function_running(frame)
    if function is None:
        return ""
    where = where_it_saves(function)
    names = names_used(getattr(function, where)).own
    if "save_for_backward" in names:
        return ""
    if "save_for_forward" in names:
        return (
            f"\nLikely cause: {where} calls ctx.save_for_forward only, and what it saves feeds jvp alone: "
            "backward's ctx.saved_tensors holds what ctx.save_for_backward saved, here nothing. Save what "
            "backward needs with ctx.save_for_backward too; a tensor may be saved both ways."
        )
    return (
        f"\nLikely cause: {where} never calls ctx.save_for_backward, so backward's ctx.saved_tensors is "
        "empty. Save every tensor backward needs there, in one ctx.save_for_backward call."
    )


def _saved_nothing_for_forward(frame: types.FrameType) -> str:
    """Why jvp found nothing in ctx.saved_tensors, where the Function's code never calls
    ctx.save_for_forward: no count was wrong, the call is missing. '' where the code does call it, or the
    Function cannot be found."""
    function = _function_running(frame)
    if function is None:
        return ""
    where = where_it_saves(function)
    if "save_for_forward" in names_used(getattr(function, where)).own:
        return ""
    return (
        f"\nLikely cause: {where} never calls ctx.save_for_forward, so jvp's ctx.saved_tensors is empty: "
        "it holds what ctx.save_for_forward saved, not what ctx.save_for_backward saved. Save what jvp "
        "needs there with ctx.save_for_forward(output)."
    )


def _function_running(frame: types.FrameType) -> type | None:
    """The notebook's Function whose rule `frame` runs, found among the frame's globals by its code: under
    torch.func, ctx belongs to a class torch generated, not to the student's."""
    code = frame.f_code
    for value in list(frame.f_globals.values()):
        if isinstance(value, type) and issubclass(value, torch.autograd.Function):
            rule = getattr(value, code.co_name, None)
            if getattr(rule, "__code__", None) is code:
                return value
    return None


def _rule_raising(error: Exception) -> str:
    """The rule of the Function that raised `error`, read off the traceback: the innermost of the
    notebook's frames named jvp or backward; backward where none is."""
    rule, entry = "backward", error.__traceback__
    while entry is not None:
        code = entry.tb_frame.f_code
        if code.co_name in {"jvp", "backward"} and not is_library_code(code):
            rule = code.co_name
        entry = entry.tb_next
    return rule


def _captured_changed_in_place(error: Exception) -> str:
    """Why torch.func refused an in-place step on a tensor the rule was handed: in jvp, the tangent x_t,
    which is the caller's; in backward, grad_out. The rule is read off the traceback."""
    if "that would mutate a captured Tensor" not in str(error):
        return ""
    if _rule_raising(error) == "jvp":
        return (
            "\nLikely cause: jvp changes its tangent x_t in place (x_t.mul_(...), x_t *= ...). x_t is the "
            "caller's tensor: compute the tangent into a new tensor (x_t * ...)."
        )
    return (
        "\nLikely cause: backward changes in place a tensor it did not create (grad_out *= ...); under "
        "torch.func that tensor is the caller's. Compute into a new tensor (grad_out * ...)."
    )


def _changed_in_place_under_vmap(error: Exception) -> str:
    """Why vmap refused an in-place step: a rule of the Function changed in place a tensor it created from
    the saved tensors alone, which has no batch dimension under vmap, while what it was handed (grad_out,
    x_t) has one. The rule is read off the traceback: the innermost of the notebook's frames named jvp or
    backward; backward where none is."""
    if "in extra_args that has more elements than `self`" not in str(error):
        return ""
    if _rule_raising(error) == "jvp":
        return (
            "\nLikely cause: jvp changes in place (slope.mul_(x_t), slope *= x_t) a tensor it created "
            "without x_t, which has no batch dimension under vmap (jacfwd, torch.func.hessian), while x_t "
            "has one. Build the tangent as one new tensor: x_t * (the derivative)."
        )
    return (
        "\nLikely cause: backward changes in place (g += ..., g *= grad_out, g.mul_(grad_out)) a tensor g "
        "it created without grad_out, which has no batch dimension under vmap, while grad_out has one. Build "
        "each gradient as one new tensor: g = grad_out * (the derivative), or the sum of its terms."
    )


def _no_batching_rule(error: Exception) -> str:
    """Why a batch of incoming gradients failed on an operation torch cannot batch there (einsum, for one):
    the operation, not a slip in the formula. torch's batched gradients (gradcheck's check_batched_grad,
    is_grads_batched=True) lack rules that torch.func.vmap has."""
    found = re.search(r"Batching rule not implemented for (aten::\w+)", str(error))
    if found is None:
        return ""
    return (
        f"\nLikely cause: torch's batched gradients (gradcheck's check_batched_grad, "
        f"is_grads_batched=True) have no batching rule for {found.group(1)}, which backward uses. The "
        "formula may be right: write that step with elementwise torch operations (*, +, .sum()), which "
        "they batch."
    )


def _leaf_changed_in_place_elsewhere(error: Exception) -> str:
    """Why a leaf that requires grad was changed in place, where the change was not backward's: inside the
    function torch.func.linearize returned (on torch 2.13 its traced graph does this when the point it
    was given requires grad: code the student did not write), or in a Function's jvp, whose tangent x_t is
    the caller's tensor. Read off the traceback: linearize's `jvp_fn`, or a frame named `jvp`."""
    if _LEAF_CHANGED_IN_PLACE not in str(error):
        return ""
    entry = error.__traceback__
    while entry is not None:
        code = entry.tb_frame.f_code
        if code.co_name == "jvp_fn" and code.co_filename.endswith(_LINEARIZE_FILE):
            return (
                "\nLikely cause: torch.func.linearize was given a point that requires grad. The function "
                "linearize returns then fails inside its own traced graph, not in your code. Linearize at "
                "x.detach(): the values are the same."
            )
        if code.co_name == "jvp" and not is_library_code(code):
            return (
                "\nLikely cause: jvp changes its tangent x_t in place (x_t.mul_(...), x_t *= ...). x_t is "
                "the caller's tensor, here a leaf that requires grad: compute the tangent into a new tensor "
                "(x_t * ...)."
            )
        entry = entry.tb_next
    return ""


def known_error_hint_for(error: Exception, function) -> str:
    """known_error_hint for an error `function` raised, with "what you differentiate has no graph"
    narrowed to the causes its code can have, as ways_out_of_the_graph reads them off it: a gradient
    taken where create_graph is passed nowhere, and the calls that cut the graph. The general hint stays
    where the code shows neither."""
    if _UNUSED in str(error):
        return _unused_hint(function)
    if _FREED in str(error) and _records_and_frees(function):
        return _RECORDS_AND_FREES
    if _FREED in str(error):
        return _backward_again_after_create_graph(function) or _freed_hint(function)
    if _NOT_REQUIRING_GRAD in str(error):
        return _DIFFERENTIATED_WITHOUT_GRAD.format(label=_argument_without_grad(error, function))
    if _VIEW_CHANGED_IN_PLACE in str(error):
        return _input_changed_in_place_and_returned(error, _applied_by(function)) or known_error_hint(error)
    if _NO_GRAPH not in str(error):
        return saved_input_changed_in_backward(error, function) or known_error_hint(error)
    used = names_used(function)
    ways = ways_out_of_the_graph(function, used)
    causes = []
    if "backward" not in used.own and _raised_by_the_first_gradient_call(error, function):
        label = _argument_without_grad(error, function)
        causes.append(
            "the first gradient your code takes is of something built from inputs that do not require grad "
            f"(differentiate a copy that does: {label} = {label}.detach().requires_grad_())"
        )
    elif ways["takes_gradients"] and not (ways["create_graph"] and all(ways["gradient_calls_recorded"])):
        causes.append(
            "a gradient computed without create_graph=True is a constant to autograd; pass "
            "create_graph=True where you take the gradient that you differentiate again"
            + (" (retain_graph=True is no substitute)" if ways["retain_graph"] else "")
        )
    if ways["calls"]:
        verb = "leaves" if len(ways["calls"]) == 1 else "leave"
        causes.append(
            f"your code uses {', '.join(ways['calls'])}, which {verb} what it computes out of the graph"
        )
    if not causes:
        return known_error_hint(error)
    return f"\nLikely cause: what you differentiate has no graph: {'; or '.join(causes)}."


def _applied_by(function) -> type | None:
    """The Function whose `apply` `function` is (`Square.apply`, as a check is given it), or None."""
    owner = getattr(function, "__self__", None)
    return owner if isinstance(owner, type) and issubclass(owner, torch.autograd.Function) else None


def saved_input_changed_in_backward(error: Exception, function) -> str:
    """Why autograd found a tensor it saved changed in place, where that tensor is a leaf (autograd's error
    names no node it is an output of: an input the caller made) and `function` is a Function's apply whose
    backward changes a tensor in place: ctx.saved_tensors gives back a saved input itself, so backward
    changed the caller's own tensor. '' otherwise (the general hint, listing other ways, follows)."""
    applied = _applied_by(function)
    text = str(error)
    if "modified by an inplace operation" not in text or "which is output" in text or applied is None:
        return ""
    if not _changes_in_place(applied.backward):
        return ""
    names = names_used(applied.backward).own & set(dir(torch.Tensor))
    changes = sorted(name for name in names if _changes_in_place_by(name))
    calls = " or ".join(f"`.{name}()`" for name in changes) or "an in-place operation (x *= ...)"
    new = " or ".join(f"`.{name[:-1]}()`" for name in changes) or "x * ..."
    return (
        f"\nLikely cause: backward applies {calls} to a saved input. ctx.saved_tensors gives back the input "
        "itself, the caller's own tensor, so backward changes it, and autograd, which saved it for "
        f"computing gradients, refuses the changed value. Compute into a new tensor ({new}) instead."
    )


def grad_switched_off_in_backward(error: Exception, function) -> str:
    """Why autograd found an input it differentiates with respect to not requiring grad, where `function`
    is a Function's apply whose backward calls requires_grad_: ctx.saved_tensors gives back the input
    itself, so backward switched off the caller's own tensor. '' otherwise (the general hint, about the
    caller's code, follows)."""
    applied = _applied_by(function)
    if _NOT_REQUIRING_GRAD not in str(error) or applied is None:
        return ""
    if "requires_grad_" not in names_used(applied.backward).own:
        return ""
    return (
        "\nLikely cause: backward calls `.requires_grad_()` on a saved tensor. ctx.saved_tensors gives back "
        "a saved input itself, so this switches off grad on the caller's own tensor, and autograd can no "
        "longer differentiate with respect to it. Remove the call: backward uses the saved tensors as they "
        "come."
    )


def _argument_without_grad(error: Exception, function) -> str:
    """The name of `function`'s one argument that, when `error` was raised, is a tensor that does not
    require grad (`points` in gradient_penalty(critic, points)): the tensor the student is told to copy
    into a leaf, by the name the code gives it. "x" where the traceback does not reach the function's own
    code or where no argument, or more than one (hvp's x and v), fits."""
    entry = _innermost_entry_of(error, function)
    if entry is None:
        return "x"
    code, values = entry.tb_frame.f_code, entry.tb_frame.f_locals
    fits = [
        name
        for name in code.co_varnames[: code.co_argcount]
        if isinstance(values.get(name), torch.Tensor) and not values[name].requires_grad
    ]
    return fits[0] if len(fits) == 1 else "x"


def _innermost_entry_of(error: Exception, function) -> types.TracebackType | None:
    """The innermost entry of `error`'s traceback that runs `function`'s own code (not a nested
    function's), or None: where the student's function was when the error was raised."""
    code = getattr(function, "__code__", None)
    entry, found = error.__traceback__, None
    while entry is not None:
        if entry.tb_frame.f_code is code:
            found = entry
        entry = entry.tb_next
    return found


def _raised_by_the_first_gradient_call(error: Exception, function) -> bool:
    """Whether `error` was raised by the first torch.autograd.grad call in `function`'s own code (not a
    nested function's): no gradient taken before it can be the constant it differentiates."""
    entry = _innermost_entry_of(error, function)
    if entry is None:
        return False
    code, offset = entry.tb_frame.f_code, entry.tb_lasti
    instructions = list(dis.get_instructions(code))
    modules, functions = _autograd_names(function)
    first = next(
        (n for n in range(len(instructions)) if _loads_autograd_grad(instructions, n, modules, functions)),
        None,
    )
    if first is None or _call_of(instructions, first) is None:
        return False
    # The offset may point into the call's inline caches: the source the instruction there runs for says
    # which call it is.
    raising = next(i for i in reversed(instructions) if i.offset <= offset)
    return _start(raising) == _start(instructions[first])


def _unused_hint(function) -> str:
    """Why autograd finds that the result does not depend on a tensor it is differentiated by, naming
    .detach() only where the code calls it: a detached copy is a new tensor, cut from its history."""
    names = names_used(function).own
    copy = (
        " Your code uses `.detach()`, whose copy is a new tensor cut off from what it was computed from: "
        "use the tensor itself."
        if names & {"detach", _FRESH_LEAF}
        else ""
    )
    return f"{_ERROR_HINTS[_UNUSED]}{copy}"


# Why a graph is found freed where a gradient call passes create_graph=True and retain_graph=False.
_RECORDS_AND_FREES = (
    "\nLikely cause: a gradient call passes create_graph=True with retain_graph=False: it records the "
    "gradient's graph for the next derivative, and frees the forward's saved tensors that graph is built on, "
    "so the next pass through it fails. Leave retain_graph out: it defaults to create_graph."
)


def _records_and_frees(function) -> bool:
    """Whether `function`'s own code makes a gradient call (torch.autograd.grad or .backward) that passes
    create_graph, not as a false constant, and retain_graph=False: a recorded gradient whose graph is freed
    as it is made."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    instructions = list(dis.get_instructions(code))
    for n in range(len(instructions)):
        keywords = _keyword_names(code, instructions, n)
        values = instructions[max(n - len(keywords), 0) : n]
        if not {"create_graph", "retain_graph"} <= set(keywords) or len(values) != len(keywords):
            continue
        given = dict(zip(keywords, values, strict=True))
        create, retain = given["create_graph"], given["retain_graph"]
        if retain.opname == "LOAD_CONST" and retain.argval is False:
            return create.opname != "LOAD_CONST" or bool(create.argval)
    return False


def _freed_hint(function) -> str:
    """Why a graph was found freed in `function`'s code. Taking the earlier call's result with
    create_graph=True is named only where one of the code's torch.autograd.grad calls lacks it: that call
    freed the graph and returned a constant. Where every such call records, that cure is already there, and
    a call that lacks retain_graph is the cause. Code that cannot be read gets both."""
    used = names_used(function)
    if not used.readable or not all(used.gradient_calls):
        return _ERROR_HINTS[_FREED]
    return (
        f"\nLikely cause: {_FREED_BY_AN_EARLIER_CALL}: pass retain_graph=True to every call but the last "
        f"that goes through that graph.{_BUILT_ON_THE_GRAPH}"
    )


def _backward_again_after_create_graph(function) -> str:
    """Why a graph was freed in code that takes a gradient by .backward(create_graph=True) and reads it
    from .grad, not by torch.autograd.grad: that backward already added the gradient of what it was called
    on, so a later backward of the same result counts it twice (and finds the graph freed by the backward
    in between); the retain_graph cause follows as the other possibility. '' for other code."""
    names = names_used(function).own
    if not {"backward", "create_graph="} <= names or "autograd" in names:
        return ""
    freed = _freed_hint(function).removeprefix("\nLikely cause: ")
    return (
        "\nLikely cause: .backward(create_graph=True) already adds its gradient to .grad: calling backward "
        "on the same result again adds it a second time, and fails once another backward freed the graph in "
        "between. A gradient read from .grad holds what .grad held before too, and leaves its graph there. "
        "Prefer torch.autograd.grad for a gradient you differentiate again: it returns it and leaves every "
        ".grad as it was."
        f"\nOr: {freed}"
    )


def _function_applied(error: Exception) -> type | None:
    """The Function whose apply raised `error`, read off the traceback as the `cls` of the innermost
    Function.apply (matched by name, not by code object: the code that runs is not always the one
    Function.apply holds), or None."""
    applied = None
    entry = error.__traceback__
    while entry is not None:
        frame = entry.tb_frame
        cls = frame.f_locals.get("cls") if frame.f_code.co_name == "apply" else None
        if isinstance(cls, type) and issubclass(cls, torch.autograd.Function):
            applied = cls
        entry = entry.tb_next
    return applied


def forward_takes_ctx_beside_setup_context(error: Exception) -> str:
    """Why a TypeError came out of applying a Function that defines setup_context and whose forward's
    first parameter is ctx, the old style's: autograd then calls forward with the inputs alone, so ctx
    takes the first input and the last one is missing. autograd's error names only the missing
    argument; the Function is read off the traceback, or ''."""
    applied = _function_applied(error) if isinstance(error, TypeError) else None
    if applied is None or applied.setup_context is torch.autograd.Function.setup_context:
        return ""
    try:
        parameters = list(inspect.signature(applied.forward).parameters)
    except (TypeError, ValueError):  # a forward inspect cannot read says nothing either way
        return ""
    if parameters[:1] != ["ctx"] or len(parameters) < 2:
        return ""
    inputs = ", ".join(parameters[1:])
    return (
        f"\nLikely cause: {applied.__name__} defines setup_context, so autograd calls forward with the "
        f"inputs alone, forward({inputs}), and its first parameter `ctx` took {parameters[1]}. Beside "
        f"setup_context, forward takes no ctx: def forward({inputs})."
    )


def changed_in_place_after_returned(error: Exception) -> bool:
    """Whether `error` is autograd's refusal of a Function's output that is a view of a tensor changed in
    place since: an input that forward returned, changed again by a later call."""
    return _VIEW_CHANGED_IN_PLACE in str(error)


def _input_changed_in_place_and_returned(error: Exception, applied: type | None = None) -> str:
    """Why autograd refused an input returned as forward's output (while saving it, or as a view changed
    in place when the output's node is asked for), where forward's code changes a tensor in place by a
    method (x.tanh_()): that call, named, changed the input and returned it. The Function is `applied`,
    or read off the traceback; '' where it or such a call is not found (the general hint follows)."""
    if not any(symptom in str(error) for symptom in (_RETURNED_AS_IS, _VIEW_CHANGED_IN_PLACE)):
        return ""
    if (applied := applied or _function_applied(error)) is None:
        return ""
    names = names_used(applied.forward).own
    changes = sorted(name for name in names & set(dir(torch.Tensor)) if _changes_in_place_by(name))
    if not changes:
        return ""
    calls = " or ".join(f"`.{name}()`" for name in changes)
    new = " or ".join(f"`.{name[:-1]}()`" for name in changes)
    return (
        f"\nLikely cause: forward calls {calls}, which changes its input in place and returns it. Build a "
        f"new tensor ({new}, no trailing underscore), unless the Function is meant to work in place."
    )


def input_changed_in_place(error: Exception, function) -> str:
    """What `function` did, in plain words, where autograd refused its output as a view of a tensor changed
    in place and the code of the Function's forward names the method that changed its input and returned
    it: torch's own words speak of a view the student never made. '' otherwise."""
    if _VIEW_CHANGED_IN_PLACE not in str(error):
        return ""
    if (applied := _applied_by(function) or _function_applied(error)) is None:
        return ""
    if not _input_changed_in_place_and_returned(error, applied):
        return ""
    inputs = list(inspect.signature(applied.forward).parameters)
    if applied.setup_context is torch.autograd.Function.setup_context:
        inputs = inputs[1:]
    changed = inputs[0] if len(inputs) == 1 else "one of its inputs"
    return f"forward changed {changed} in place and returned it, and autograd refuses that output."


# How backward returns its gradients, told wherever autograd refuses what it returned.
_ONE_GRADIENT_PER_INPUT = (
    "Return one gradient per input of forward, in order, each a tensor or None (for an input that needs "
    "none): for one input, the tensor itself or a tuple of one; for several, a tuple. Autograd counts a "
    "list, or a tensor returned alone, as one"
)

# Why arithmetic mixes a tuple with a tensor, in code that takes gradients.
_GRAD_RETURNS_A_TUPLE = (
    "\nLikely cause: torch.autograd.grad returns a tuple, one gradient per input, even for one input: "
    "unpack it, (slope,) = torch.autograd.grad(...)."
)

# autograd's error for a leaf that requires grad changed in place, and where torch.func.linearize lives.
_LEAF_CHANGED_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation"
_LINEARIZE_FILE = os.path.join("torch", "_functorch", "eager_transforms.py")

# Where the interpreter's own modules and the installed packages (torch) live: not the notebook's code.
_LIBRARIES = tuple({sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix})


def is_library_code(code: types.CodeType) -> bool:
    """Whether `code` belongs to the interpreter or an installed package (torch), not to the notebook."""
    return code.co_filename.startswith(_LIBRARIES)


# autograd's error for differentiating a tensor that has no graph.
_NO_GRAPH = "does not require grad and does not have a grad_fn"
_NOT_REQUIRING_GRAD = "One of the differentiated Tensors does not require grad"
# Why autograd refuses to differentiate with respect to a tensor, the tensor named by `label`.
_DIFFERENTIATED_WITHOUT_GRAD = (
    "\nLikely cause: you differentiate with respect to a tensor that does not require grad; "
    "differentiate with respect to a copy that does: {label} = {label}.detach().requires_grad_()."
)
# autograd's errors for a tensor differentiated with respect to that the result was not computed from, and
# for a second backward through a graph freed by the first.
_UNUSED = "appears to not have been used in the graph"
_FREED = "backward through the graph a second time"
# What freed it, and what a recorded gradient shares with it: said whichever cure the hint names.
_FREED_BY_AN_EARLIER_CALL = (
    "an earlier backward (or torch.autograd.grad) call through the same graph freed its saved tensors"
)
_BUILT_ON_THE_GRAPH = (
    " A gradient taken with create_graph=True is built on the graph it differentiates, and shares its nodes."
)

# autograd's error for an input that forward returned as its output.
_RETURNED_AS_IS = "returned as-is as output is being saved for backward"
# What autograd's own errors mean in the mistakes the lessons warn about.
_SETUP_CONTEXT_SIGNATURE = (
    "\nLikely cause: autograd calls setup_context(ctx, inputs, output): ctx, the tuple of forward's inputs "
    "and what forward returned. Take all three, even one you do not use."
)
# Why adding to a .grad that is None fails, and what to write instead.
_ADDING_TO_NONE = (
    ": .grad is None until a first backward fills it. Use p.grad = g if p.grad is None else p.grad + g, or "
    "let backward do the adding."
)
_ERROR_HINTS = {
    _FREED: (
        f"\nLikely cause: {_FREED_BY_AN_EARLIER_CALL}. If you differentiate what that call returned, take "
        "it with create_graph=True, which keeps the graph too; otherwise pass retain_graph=True to every "
        f"call but the last that goes through that graph.{_BUILT_ON_THE_GRAPH}"
    ),
    "modified by an inplace operation": (
        "\nLikely cause: a tensor autograd saved for backward was changed in place afterwards (e.g. "
        "out += 1, result.mul_(grad_out) inside backward, or a second call of a forward that "
        "changes its input in place); compute into a new tensor instead."
    ),
    "'tuple' and 'Tensor'": _GRAD_RETURNS_A_TUPLE,
    "for +=: 'NoneType' and 'Tensor'": (
        f"\nLikely cause: += on a value that is None, such as p.grad += g{_ADDING_TO_NONE}"
    ),
    "'NoneType' object has no attribute 'add_'": (
        f"\nLikely cause: .add_() on a value that is None, such as p.grad.add_(g){_ADDING_TO_NONE}"
    ),
    "'Tensor' and 'tuple'": _GRAD_RETURNS_A_TUPLE,
    "refers to a single memory location": (
        "\nLikely cause: backward changes grad_out in place (grad_out.mul_(...), grad_out *= ...), and "
        "autograd may hand it a tensor expanded from a single value, as torch.func's grad does, whose "
        "elements share memory; compute into a new tensor instead (grad_out * ...)."
    ),
    _NO_GRAPH: (
        "\nLikely cause: what you differentiate has no graph: a gradient computed without "
        "create_graph=True, a detached tensor, or something built from inputs that do not require grad "
        "(differentiate a copy that does: x = x.detach().requires_grad_())."
    ),
    "forward() takes": (
        "\nLikely cause: a forward written without ctx needs a setup_context(ctx, inputs, output) "
        "staticmethod; without one, autograd passes ctx to forward as its first argument."
    ),
    "expected Variable or None (got list)": (
        f"\nLikely cause: backward returns a list where autograd wants a tensor. {_ONE_GRADIENT_PER_INPUT}."
    ),
    "expected Variable or None (got": (
        "\nLikely cause: backward returns a number (such as 0) where a gradient belongs. Return a tensor, "
        "or None for an input that gets no gradient. With ctx.set_materialize_grads(False), an output "
        "that gets no gradient (as when one output at a time is differentiated) reaches backward as None."
    ),
    _RETURNED_AS_IS: (
        "\nLikely cause: forward returns one of its inputs itself, changed in place (x.mul_(y)) or not. "
        "Build the result as a new tensor (x * y), unless the Function is meant to work in place."
    ),
    _VIEW_CHANGED_IN_PLACE: (
        "\nLikely cause: forward changes one of its inputs in place (x.mul_(y), x *= y) and returns it. "
        "Build the result as a new tensor (x * y); cloning the output, as torch suggests, still leaves the "
        "input changed."
    ),
    "a leaf Variable that requires grad has been used in an in-place operation": (
        "\nLikely cause: a tensor that requires grad and has no history (a leaf, such as a test's input) "
        "was changed in place, which autograd refuses. If a Function's setup_context marks that input "
        "with ctx.mark_dirty, its forward changed it: a Function that is not meant to change its input "
        "builds its result as a new tensor (x * y, not x.mul_(y)), and one meant to work in place is "
        "applied to a copy (x.clone()). Otherwise change a copy, not the leaf."
    ),
    "Expected both tensor and its forward grad to be floating point or complex": (
        "\nLikely cause: jvp returns no tensor (None, as when it computes the tangent without `return`): "
        "it must return the output's tangent, a tensor of the output's shape and dtype."
    ),
    _LEAF_CHANGED_IN_PLACE: (
        "\nLikely cause: backward changes a tensor in place (x.pow_(2) on a saved input, grad_out *= ...). "
        "Differentiated again, that tensor is a leaf that requires grad (the test's input, or the incoming "
        "gradient), which autograd refuses to change in place: compute into a new tensor (x**2, "
        "grad_out * ...)."
    ),
    "A view was created in no_grad mode and its base or another view of its base has been modified": (
        "\nLikely cause: a view made where autograd does not record (in setup_context, as "
        "output.view_as(output), or under torch.no_grad()) of a tensor changed in place; a Function that "
        "works in place saves its output itself: ctx.save_for_backward(output)."
    ),
    "accessing `data` under vmap transform is not allowed": (
        "\nLikely cause: the Function reads .data, which torch.func refuses. It needs none: autograd records "
        "nothing forward computes anyway, and backward's operations must stay recorded. Compute with the "
        "tensors themselves."
    ),
    "doesn't have storage": (
        "\nLikely cause: the Function leaves torch (.numpy()) or reads memory directly, and torch.func hands "
        "it tensors that wrap others and own no memory. A Function meant for torch.func computes with torch "
        "operations on the tensors themselves."
    ),
    "where it is not associated with a value": (
        "\nLikely cause: a variable assigned only under an if, such as a gradient computed only when "
        "ctx.needs_input_grad says so: give it its other value first (grad_x = grad_w = None), so that it "
        "exists whichever way the if goes."
    ),
    "grad can be implicitly created only for scalar outputs": (
        "\nLikely cause: the tensor differentiated has more than one element, so autograd needs a weight "
        "for each: pass grad_outputs (or .backward(gradient)), or differentiate a scalar such as its .sum()."
    ),
    "setup_context() missing": _SETUP_CONTEXT_SIGNATURE,
    "setup_context() takes": _SETUP_CONTEXT_SIGNATURE,
    "Batching rule not implemented for aten::detach": (
        "\nLikely cause: backward calls .detach() on the incoming gradient or on a gradient computed from "
        "it. Fed a batch of incoming gradients, backward works on batched tensors, which vmap cannot "
        "detach, so torch's gradcheck with check_batched_grad=True fails on it too; and a detached "
        "gradient cannot be differentiated again. Return the gradient as computed, without .detach()."
    ),
    "marked as dirty during the forward method were not returned as output": (
        "\nLikely cause: the input is marked dirty (ctx.mark_dirty), but forward returns another tensor, "
        "a new one or an alias (x.data, x.detach()). Change the input itself in place and return it."
    ),
    "returned an invalid number of forward gradients": (
        "\nLikely cause: jvp returns a count of tangents other than its forward's outputs, such as a tuple "
        "with an extra item (return tangent, None). Return one tangent per output of forward, in order: for "
        "one output, the tangent itself."
    ),
    "but expected shape compatible with": (
        "\nLikely cause: a gradient that does not have its input's shape, as one summed to a scalar "
        "(.sum()) does: each gradient backward returns has the shape of its input."
    ),
    "save_for_backward can only save variables": (
        "\nLikely cause: ctx.save_for_backward was given something other than tensors, such as the tuple "
        "inputs: pass the tensors themselves, one argument each, by name or as "
        "ctx.save_for_backward(*inputs)."
    ),
    "it must override the setup_context staticmethod": (
        "\nLikely cause: forward takes ctx (the old style), which torch.func cannot transform: write "
        "forward without ctx and fill ctx in a setup_context(ctx, inputs, output) staticmethod."
    ),
    "mark_dirty can only accept variables": (
        "\nLikely cause: ctx.mark_dirty was given something other than tensors, such as the tuple inputs: "
        "pass the tensors themselves, one argument each, by name or as ctx.mark_dirty(*inputs)."
    ),
    "`inputs` argument to `grad()` cannot be empty": (
        "\nLikely cause: the tensors to differentiate with respect to are none: an empty list or dict, or "
        "one built from a generator such as net.named_parameters() or net.parameters() that an earlier use "
        "ran through (a generator runs once). Build the dict or list once, dict(net.named_parameters()), "
        "and use it every time."
    ),
    "parameter_and_buffer_dicts to be": (
        "\nLikely cause: functional_call was given the parameters as something other than a dict from "
        "names to tensors: a list or tuple of tensors, or a generator such as net.named_parameters(). "
        "Give it a dict, {name: tensor}, and have a function that adapts parameters return one."
    ),
    "list indices must be integers or slices, not str": (
        "\nLikely cause: a list is looked up by a name (adapted[name]) where a dict from names to tensors "
        "belongs: the function that returns the parameters returns a list; return a dict, {name: tensor}."
    ),
    _UNUSED: (
        "\nLikely cause: what you differentiate does not depend on that tensor: it must be computed from "
        "that very tensor (take both from the same call), not from another one with the same values."
    ),
    _NOT_REQUIRING_GRAD: _DIFFERENTIATED_WITHOUT_GRAD.format(label="x"),
}
