"""Measuring a student's function on the inputs the judge chose.

`measure` calls the function, its backward and its double backward exactly as a check needs, and
returns a tree of plain values for `autograder.wire.arrays.pack`: what the function returned, the
gradients it gave, what gradcheck would compare, and, as text, any error it raised and the likely
cause of a mistake. It compares nothing with the reference: the judge does, in a process where no
student code runs.
"""

import importlib
import importlib.abc
import importlib.machinery
import inspect
import sys
import types
import warnings
from collections.abc import Callable

import torch

from autograder.probe import diagnose
from autograder.probe.refused import AnswerRefusedError
from autograder.wire import arrays, samples
from autograder.wire.tensors import numpy_result

# The course's reference implementations: an answer must not borrow them.
REFERENCE_PACKAGE = "solutions"
USES_REFERENCE = (
    "Your answer uses the course's reference implementation (the `solutions` package) instead of "
    "writing its own. Write it yourself; this check gives no credit."
)
# Student text (error messages) kept in a measurement, at most.
_TEXT_LIMIT = 2000
# Central differences step, as gradcheck takes it for float64.
_EPS = 1e-6


class UsesReference(BaseException):
    """Raised by any use of a `_Borrowed` name. A BaseException, so that no `except Exception` on the
    way (the student's, or this module's) turns it into an ordinary error: `measure` refuses the answer."""


class _Borrowed:
    """A name an answer imported from the reference package, where the package cannot be imported.

    Any use of it refuses the check, so that an answer which calls the reference only in its backward
    keeps the checks its own code passes and loses the others: the verdicts a class grader gives,
    where the import itself fails in the notebook.
    """

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attribute: str):
        # A class built on it asks for __mro_entries__; getattr(x, "__self__", None) and the like ask
        # for other dunders and expect AttributeError.
        if attribute.startswith("__") and attribute != "__mro_entries__":
            raise AttributeError(attribute)
        raise UsesReference(f"{self._name}.{attribute}")

    def __call__(self, *args, **kwargs):
        raise UsesReference(self._name)


class _ReferenceModule(types.ModuleType):
    def __getattr__(self, name: str) -> _Borrowed:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Borrowed(f"{self.__name__}.{name}")


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the reference package and its modules as stand-ins holding nothing of the reference."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] != REFERENCE_PACKAGE:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec) -> types.ModuleType:
        return _ReferenceModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []


def stand_in_for_the_reference() -> None:
    """In a process about to unpickle an answer: the reference's names become `_Borrowed` stand-ins.

    For a process that must not hold the reference (a plain-mode measuring child); never for one that
    computes a plan.
    """
    for name in [m for m in sys.modules if m.split(".")[0] == REFERENCE_PACKAGE]:
        del sys.modules[name]
    sys.meta_path.insert(0, _StandInFinder())


def measure(request: dict, function: Callable, builder: Callable | None = None) -> dict:
    """What `function` does on the request's inputs, as plain values; never raises."""
    warnings.simplefilter("ignore")  # torch warnings must not reach a graded cell's stderr
    if borrows_reference(function):
        return {"refused": USES_REFERENCE}
    try:
        if request["kind"] == "result":
            return _measure_result(request, function, builder)
        return _measure_function(request, function)
    except UsesReference:
        return {"refused": USES_REFERENCE}
    except Exception as error:  # noqa: BLE001 - whatever the student's objects do, the judge hears of it
        return {"refused": _text(f"The checker could not measure your code: {type(error).__name__}: {error}")}


def measure_in(request: dict, namespace: dict) -> dict:
    """What a class grader's check asks of a notebook: find the function under test (and the argument
    builder) in the notebook's namespace, with the test's definitions they need, and measure it."""
    scope = dict(namespace)  # a copy: the test's definitions do not replace the student's names
    try:
        exec(request["preamble"], scope)  # the test's own definitions, beside the answer
        function = _find(request["function"], scope)
        builder = _find(request["builder"], scope) if request["builder"] else None
    except Exception as error:  # noqa: BLE001 - a missing answer is the student's to fix, said plainly
        return {"refused": _text(f"{type(error).__name__}: {error}")}
    return measure(request, function, builder)


def _find(located: dict, scope: dict):
    """The object a check names: a name of the notebook (with attributes), or one a module defines."""
    if "module" in located:
        value = importlib.import_module(located["module"])
        path = located["qualname"].split(".")
    else:
        path = (located.get("student") or located["cell"]).split(".")
        if path[0] not in scope:
            raise NameError(f"name {path[0]!r} is not defined")
        value, path = scope[path[0]], path[1:]
    for attribute in path:
        value = getattr(value, attribute)
    return value


def borrows_reference(function: Callable) -> bool:
    """True when the function, its Function class or any base or method comes from the reference."""
    owner = getattr(function, "__self__", None)
    if isinstance(function, _Borrowed) or isinstance(owner, _Borrowed):
        return True
    candidates = [function, *(inspect.getmro(owner) if isinstance(owner, type) else ())]
    if isinstance(owner, type):
        candidates += [getattr(owner, name, None) for name in ("forward", "backward", "setup_context")]
    modules = (getattr(c, "__module__", None) or "" for c in candidates)
    return any(m == REFERENCE_PACKAGE or m.startswith(REFERENCE_PACKAGE + ".") for m in modules)


def _text(message: str) -> str:
    return message if len(message) <= _TEXT_LIMIT else message[:_TEXT_LIMIT] + " ..."


def _called(name: str, function: Callable, args: tuple, where: str = ""):
    """(result, None), or (None, the message saying what the student's code raised). It says what the code
    was called on where a wrong value's message says it (`autograder.judge.compare`): in `name` for a
    Function ("Square on x of shape (3,)"), and in `where`, last, for check_result ("when called with the
    net, x that `lesson_net` builds")."""
    try:
        return function(*args), None
    except Exception as error:  # noqa: BLE001 - any error in student code is reported, not raised
        return None, _raised(name, function, error, where)


def _raised(name: str, function: Callable, error: Exception, where: str = "") -> str:
    """The message saying what the student's code raised, as `_called` words it."""
    stub = _stub_that_raised(error)
    if stub:
        return (
            f"{stub} is not written yet: calling it raises NotImplementedError. "
            "Replace the line `raise NotImplementedError(...)` with your code."
        )
    if isinstance(error, AnswerRefusedError):
        # A refusal may name the function itself ("inner_step changed ..."): not twice. It ends as a
        # sentence, before the line saying what the function was called on.
        said = str(error) if str(error).startswith(f"{name} ") else f"{name}: {error}"
        said += "" if said.endswith((".", "?", "!")) else "."
    else:
        hint = diagnose.known_error_hint_for(error, function)
        if plainly := diagnose.input_changed_in_place(error, function):
            said = f"{name}: {plainly}{hint}"
        else:
            said = f"{name} raised {type(error).__name__}: {diagnose.quoted(error)}{hint}"
    return _text(said) + (f"\n  {where}" if where else "")


def _stub_that_raised(error: Exception) -> str | None:
    """The notebook's function that raised a NotImplementedError itself, by the name the student wrote
    (`inner_step`, `Square.forward`): the release's stub, and not the test's function that called it; None
    for any other error, and for torch's own NotImplementedError (a jvp a Function lacks)."""
    entry = error.__traceback__
    while entry is not None and entry.tb_next is not None:
        entry = entry.tb_next
    if not isinstance(error, NotImplementedError) or entry is None:
        return None
    code = entry.tb_frame.f_code
    return None if diagnose.is_library_code(code) else code.co_qualname


def _as_outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _leaves_of(inputs: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    return tuple(t.clone().requires_grad_() for t in inputs)


def _measure_function(request: dict, function: Callable) -> dict:
    kind, name, names = request["kind"], request["name"], request["names"]
    records = []
    measurement = {"samples": records}
    for sample in request["samples"]:
        inputs = _leaves_of(sample["inputs"])
        record: dict = {}
        records.append(record)
        called = f"{name} on {samples.describe(names, inputs)}"
        value, error = _called(called, function, inputs)
        if error:
            record["error"] = error
            break
        outputs = _as_outputs(value)
        record["outputs"] = [arrays.tree(o) for o in outputs]
        record["one_tensor_twice"] = diagnose.one_tensor_twice(outputs, inputs)
        if isinstance(outputs[0], torch.Tensor):
            record["not_returned"] = diagnose.intermediates_not_returned(outputs[0])
        if kind == "forward" or len(outputs) != len(sample["grad_outs"]):
            continue
        try:
            _hints_for_the_outputs(record, outputs, inputs, names)
        except RuntimeError as refused:
            # The hints apply the Function again: one whose forward changes its input in place and returns
            # it has changed the first output too, and autograd refuses it. The student's error, told so.
            if not diagnose.changed_in_place_after_returned(refused):
                raise
            record["error"] = _raised(called, function, refused)
            break
        if kind == "first_derivative":
            _first_derivative(record, name, names, outputs, inputs, sample["grad_outs"])
        else:
            _second_derivative(record, name, names, function, outputs, inputs, sample)
        record["gradcheck"] = _gradcheck(
            kind, function, inputs, sample, request.get("batched") is True, outputs[0]
        )
        record["changes_outputs"] = diagnose.changes_outputs_in_backward(
            _as_outputs(_called(name, function, inputs)[0]), inputs
        )
        # On outputs of their own: changes_outputs_in_backward's backward frees what the Function saved.
        record["backward_bits"] = diagnose.backward_float_bits(
            _as_outputs(_called(name, function, inputs)[0])[0]
        )
    return measurement


def _hints_for_the_outputs(record: dict, outputs: tuple, inputs, names) -> None:
    """What the judge adds to a wrong derivative: the Function's extra outputs, and the inputs it saved."""
    if isinstance(outputs[0], torch.Tensor):
        record["extras_hint"] = (
            diagnose.non_differentiable_extras(outputs[0], inputs)
            or diagnose.ignored_extra_outputs(outputs[0], inputs, len(outputs))
            or diagnose.wrong_output_term(outputs[0], inputs)
        )
        record["saved"] = diagnose.saved_inputs(outputs[0], inputs, names)


def _backward(name, names, outputs, inputs, grad_outs, create_graph: bool):
    """(gradients, None) or (None, why backward could not give them)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outs, strict=True) if isinstance(o, torch.Tensor)]
    if not pairs and outputs and (cause := numpy_result(type(outputs[0]).__name__)):
        return None, f"The output of {name} is not a tensor, so autograd never calls backward.\n{cause}"
    if not any(o.requires_grad for o, _ in pairs):
        return None, (
            f"The output of {name} does not require grad, so backward is never called. "
            "Call your Function through .apply, do not detach its result, and do not mark it with "
            "ctx.mark_non_differentiable in forward: a marked output gets no grad_fn."
        )
    try:
        return torch.autograd.grad(
            [o for o, _ in pairs if o.requires_grad],
            inputs,
            [g for o, g in pairs if o.requires_grad],
            create_graph=create_graph,
            allow_unused=True,
        ), None
    except Exception as error:  # noqa: BLE001 - as in _called
        if _stub_that_raised(error):
            return None, f"The backward of {name} is not written yet: it raises NotImplementedError."
        return None, _text(
            f"The backward of {name} on {samples.describe(names, inputs)} raised {type(error).__name__}: "
            f"{diagnose.quoted(error)}"
            f"{diagnose.none_met_unmaterialized(error, pairs[0][0]) or diagnose.known_error_hint(error)}"
        )


def _name_the_incoming_gradient(record, outputs) -> None:
    """The name backward gives its incoming gradient (grad_out, or grad_grad_x in a Function that is itself
    a backward): messages about that tensor use the student's own word. A backward taking *grads names
    none."""
    cls = diagnose.function_class(outputs[0]) if outputs and isinstance(outputs[0], torch.Tensor) else None
    try:
        parameters = list(inspect.signature(cls.backward).parameters.values()) if cls else []
    except (TypeError, ValueError):
        return
    if len(parameters) >= 2 and parameters[1].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
        record["incoming_name"] = parameters[1].name


def _first_derivative(record, name, names, outputs, inputs, grad_outs) -> None:
    _name_the_incoming_gradient(record, outputs)
    grads, error = _backward(name, names, outputs, inputs, grad_outs, create_graph=False)
    # What the incoming gradients hold after backward: the judge compares them with what it sent.
    record["grad_outs_after"] = [arrays.tree(g) for g in grad_outs]
    if error:
        record["backward_error"] = error
    else:
        record["grads"] = [arrays.tree(g) for g in grads]
        # A grad_out reduced to one number is named as the code reduced it: .sum().item(), not .sum() alone.
        cls = diagnose.function_class(outputs[0]) if isinstance(outputs[0], torch.Tensor) else None
        if cls is not None:
            record["making_numbers"] = diagnose.calls_making_numbers(diagnose.names_used(cls.backward))


def _grad_outs_after_a_first_backward(record, name, names, function, inputs, grad_outs) -> None:
    """What a backward that failed with create_graph=True does to incoming gradients that do not require
    grad, run again as a first backward on a fresh call: the judge tells a change in place, which autograd
    refuses where grad_out requires grad, from the numbers."""
    again, error = _called(name, function, inputs)
    if error is None and len(_as_outputs(again)) == len(grad_outs):
        plain = [g.clone() for g in grad_outs]
        _backward(name, names, _as_outputs(again), inputs, plain, create_graph=False)
        record["grad_outs_after"] = [arrays.tree(g) for g in plain]


def _second_derivative(record, name, names, function, outputs, inputs, sample) -> None:
    grad_outs = tuple(g.clone().requires_grad_() for g in sample["grad_outs"])
    grads, error = _backward(name, names, outputs, inputs, grad_outs, create_graph=True)
    if error:
        record["backward_error"] = error
        _name_the_incoming_gradient(record, outputs)
        _grad_outs_after_a_first_backward(record, name, names, function, inputs, sample["grad_outs"])
        return
    record["grads"] = [arrays.tree(g) for g in grads]
    if any(g is None for g in grads):
        return
    if isinstance(outputs[0], torch.Tensor):
        record["cut_hint"] = diagnose.cut_from_graph(outputs[0])
        record["untracked_hint"] = diagnose.untracked_in_backward(outputs[0])
        record["computed_on_ctx_hint"] = diagnose.computed_on_ctx(outputs[0], inputs)
        record["called_functions"] = diagnose.functions_backward_calls(outputs[0], grads)
    if not any(g.requires_grad for g in grads):
        return
    variables = (*inputs, *grad_outs)
    try:
        grads2 = torch.autograd.grad(
            [g for g in grads if g.requires_grad],
            variables,
            [u for g, u in zip(grads, sample["grad_grads"], strict=True) if g.requires_grad],
            allow_unused=True,
        )
        record["grads2"] = [arrays.tree(g) for g in grads2]
    except Exception as error:  # noqa: BLE001 - an error in the student's double backward is reported
        record["grads2_error"] = _text(f"{type(error).__name__}: {diagnose.quoted(error)}")
        record["grads2_hint"] = (
            diagnose.grad_switched_off_in_backward(error, function)
            or diagnose.none_met_unmaterialized(error, outputs[0])
            or diagnose.known_error_hint(error)
        )


def _checked(kind: str, function: Callable, inputs, sample) -> tuple[Callable, list[torch.Tensor]]:
    """The function gradcheck (first derivative) or gradgradcheck (second) checks, and its arguments:
    for the second, the gradient with create_graph=True as a function of the inputs and grad_outs."""
    if kind == "first_derivative":
        return function, [t.detach() for t in inputs]
    count = len(inputs)

    def checked(*variables):
        outputs = _as_outputs(function(*variables[:count]))
        pairs = [(o, g) for o, g in zip(outputs, variables[count:], strict=True) if o.requires_grad]
        grads = torch.autograd.grad(
            [o for o, _ in pairs],
            variables[:count],
            [g for _, g in pairs],
            create_graph=True,
            allow_unused=True,
        )
        return tuple(
            torch.zeros_like(x) if g is None else g for x, g in zip(variables[:count], grads, strict=True)
        )

    return checked, [t.detach() for t in inputs] + list(sample["grad_outs"])


def _gradcheck(kind: str, function: Callable, inputs, sample, batched: bool, output) -> dict:
    """What gradcheck (first derivative) or gradgradcheck (second) looks at, with their defaults, as
    numbers: the Jacobians by backward and by finite differences, then what backward gives for incoming
    gradients that are zero, and that are undefined (None); with `batched`, what it gives for a batch
    of incoming gradients under vmap (their check_batched_grad). `output`, function's first output,
    names the Function behind it in a hint."""
    checked, arguments = _checked(kind, function, inputs, sample)
    try:
        analytic, again = _analytic(checked, arguments)
        numbers = {"analytic": analytic, "again": again, "numeric": _numeric(checked, arguments)}
    except Exception as error:  # noqa: BLE001 - a crash inside the student's code fails the comparison
        failed = _failed(error, function)
        return failed | {"hint": failed["hint"] or diagnose.none_met_unmaterialized(error, output)}
    numbers["zeroed"] = _fed(checked, arguments, lambda index: False)
    numbers["undefined"] = _with_undefined_gradients(checked, arguments)
    if batched:
        numbers["batched"] = _batched(checked, arguments)
    return numbers


def _failed(error: Exception, function: Callable | None = None) -> dict:
    # A helper's finding, met while a check differentiates, is named as the ValueError it is.
    kind = ValueError.__name__ if isinstance(error, AnswerRefusedError) else type(error).__name__
    hint = (
        diagnose.grad_switched_off_in_backward(error, function)
        or diagnose.saved_input_changed_in_backward(error, function)
        or diagnose.known_error_hint(error)
    )
    return {"error": _text(f"{kind}: {diagnose.quoted(error)}"), "hint": hint}


def _differentiable(checked: Callable, arguments: list[torch.Tensor]):
    """Fresh leaves for the arguments, and the outputs of `checked` on them that require grad."""
    variables = [a.clone().requires_grad_() for a in arguments]
    outputs = [o for o in _as_outputs(checked(*variables)) if isinstance(o, torch.Tensor) and o.requires_grad]
    return variables, outputs


def _fed(checked: Callable, arguments: list[torch.Tensor], undefined: Callable[[int], bool]) -> dict:
    """The gradients backward gives when every incoming gradient is zero, those of the outputs
    `undefined` picks made undefined (None to a Function that does not materialize them): gradcheck
    wants each to be None or zero."""
    outputs = []
    try:
        variables, outputs = _differentiable(checked, arguments)
        make_undefined = torch._C._functions.UndefinedGrad()
        marked = [make_undefined(o) if undefined(index) else o for index, o in enumerate(outputs)]
        if not marked:
            return {"grads": []}
        grads = torch.autograd.grad(
            marked, variables, [torch.zeros_like(o) for o in marked], allow_unused=True
        )
    except Exception as error:  # noqa: BLE001 - backward's own error is the finding
        failed = _failed(error)
        if isinstance(error, TypeError | AttributeError) and "NoneType" in str(error) and not failed["hint"]:
            failed["hint"] = _text(diagnose.COMPUTED_WITH_NONE)
        if outputs and all(undefined(index) for index in range(len(outputs))):
            return failed | {"returned": diagnose.returned_for_missing_gradients(outputs)}
        return failed
    return {"grads": [arrays.tree(g) for g in grads]}


def _with_undefined_gradients(checked: Callable, arguments: list[torch.Tensor]) -> list[dict]:
    """As gradcheck's check_undefined_grad: what backward gives when every incoming gradient is undefined,
    then, for several outputs, when each one alone is."""
    every = _fed(checked, arguments, lambda index: True)
    try:
        _, outputs = _differentiable(checked, arguments)
    except Exception:  # noqa: BLE001 - a function that cannot be called again fails in `every` too
        return [every]
    alone = [lambda index, which=which: index == which for which in range(len(outputs))]
    return [every, *(_fed(checked, arguments, one) for one in alone)] if len(outputs) > 1 else [every]


# How many incoming gradients a batched check feeds at once, as gradcheck's check_batched_grad does.
_BATCH = 2


def _batched(checked: Callable, arguments: list[torch.Tensor]) -> dict:
    """For each output, the gradients backward gives for a batch of random incoming gradients under
    vmap, and for each of them alone: gradcheck's check_batched_grad wants them equal."""
    gen = torch.Generator().manual_seed(0)
    vmapped, looped = [], []
    try:
        variables, outputs = _differentiable(checked, arguments)
        for output in outputs:
            batch = torch.randn((_BATCH, *output.shape), generator=gen, dtype=output.dtype)
            grads = torch.autograd.grad(
                output, variables, batch, retain_graph=True, allow_unused=True, is_grads_batched=True
            )
            vmapped += [
                torch.zeros((_BATCH, *v.shape), dtype=v.dtype) if g is None else g
                for v, g in zip(variables, grads, strict=True)
            ]
            alone = [
                torch.autograd.grad(output, variables, v, retain_graph=True, allow_unused=True) for v in batch
            ]
            looped += [
                torch.stack([torch.zeros_like(v) if g is None else g for g in column])
                for v, column in zip(variables, zip(*alone, strict=True), strict=True)
            ]
    except Exception as error:  # noqa: BLE001 - an error under vmap is the finding
        return _failed(error)
    return {"vmapped": [t.detach() for t in vmapped], "looped": [t.detach() for t in looped]}


def _analytic(function: Callable, arguments: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Row i: the gradient of output element i with respect to every input element, by backward; taken
    twice through the same graph, as gradcheck does, since a backward that changes what it saved gives
    another answer the second time."""
    variables = [a.clone().requires_grad_() for a in arguments]
    outputs = [o.reshape(-1) for o in _as_outputs(function(*variables))]
    return _rows(outputs, variables), _rows(outputs, variables)


def _rows(outputs: list[torch.Tensor], variables: list[torch.Tensor]) -> torch.Tensor:
    rows = []
    for output in outputs:
        for index in range(output.numel()):
            if not output.requires_grad:
                rows.append(torch.zeros(sum(v.numel() for v in variables), dtype=torch.float64))
                continue
            grads = torch.autograd.grad(output[index], variables, retain_graph=True, allow_unused=True)
            rows.append(
                torch.cat(
                    [
                        (torch.zeros_like(v) if g is None else g).reshape(-1)
                        for v, g in zip(variables, grads, strict=True)
                    ]
                )
            )
    return torch.stack(rows) if rows else torch.zeros(0, dtype=torch.float64)


def _numeric(function: Callable, arguments: list[torch.Tensor]) -> torch.Tensor:
    """Column j: central differences of every output element along input element j."""

    def evaluate(values):
        variables = [v.clone().requires_grad_() for v in values]
        return torch.cat([o.detach().reshape(-1) for o in _as_outputs(function(*variables))])

    columns = []
    for position, argument in enumerate(arguments):
        for index in range(argument.numel()):
            shifted = []
            for step in (_EPS, -_EPS):
                values = [a.clone() for a in arguments]
                values[position].view(-1)[index] += step
                shifted.append(evaluate(values))
            columns.append((shifted[0] - shifted[1]) / (2 * _EPS))
    return torch.stack(columns, dim=1) if columns else torch.zeros(0, dtype=torch.float64)


def _measure_result(request: dict, function: Callable, builder: Callable) -> dict:
    name, names = request["name"], request["names"]
    args = builder(torch.Generator().manual_seed(request["seed"]))
    args = args if isinstance(args, tuple) else (args,)
    if len(args) != len(names):
        return {"arity": len(args)}
    leaves = samples.leaves(args, names)
    flags = [isinstance(arg, torch.Tensor) and arg.requires_grad for arg in args]
    with diagnose.TensorsMade() as made:
        result, error = _called(name, function, args, request["where"])
    if error:
        return {"error": error}
    measurement = {
        "leaves": [label for label, _ in leaves],
        "flags_before": flags,
        "flags_after": [isinstance(arg, torch.Tensor) and arg.requires_grad for arg in args],
        # A caller's tensor given a history was changed in place by a Function that marked it dirty.
        "histories_after": [isinstance(arg, torch.Tensor) and arg.grad_fn is not None for arg in args],
        "result": arrays.tree(result),
        "leaf_grads": [arrays.tree(leaf.grad) for _, leaf in leaves],
    }
    tensors = samples.tensors(result)
    # A leaf the answer made and left in a cycle is out of its result's reach: only `made` still sees it.
    cycle = diagnose.tensor_in_a_gradient_cycle([t for _, t in leaves] + made.tensors)
    measurement["gradient_cycle"] = cycle is not None
    # Numbers written in are the student's own only where the function checked is: a test cell's wrapper
    # may build its result with torch.tensor from what the student's code computed.
    own = "student" in request.get("function", {})
    measurement["written_in"] = own and bool(tensors) and all(made.written_in(tensor) for tensor in tensors)
    measurement["grads_written_in"] = [own and made.written_in(leaf.grad) for _, leaf in leaves]
    if cycle is not None:
        measurement["cycle_in"] = {
            "label": next((label for label, leaf in leaves if leaf is cycle), None),
            "leaf": cycle.is_leaf,
        }
    used = diagnose.names_used(function)
    measurement["calls_backward"] = used.calls_backward
    if _holds_a_number(result):
        measurement["making_numbers"] = diagnose.calls_making_numbers(used)
    measurement["zeroes_grads"] = diagnose.zeroes_grads(used)
    measurement["writes_grads"] = used.stores_grad
    measurement["takes_abs"] = diagnose.takes_absolute_values(used)
    measurement["reshaping"] = diagnose.reshaping_calls(used)
    measurement["float32_made"] = diagnose.float32_made(made.tensors, args, used)
    # Read for a result's flow and for the .grad a backward on a constant leaves unchanged.
    measurement["ways_out"] = diagnose.ways_out_of_the_graph(function, used, args, made.copies_tensors)
    wanted = request["flow"]
    if not wanted or not leaves:
        return measurement
    if any(index >= len(tensors) for index in wanted):
        measurement["flow"] = {"missing": True}
    elif not all(tensors[index].requires_grad for index in wanted):
        measurement["flow"] = {"requires_grad": False}
    else:
        measurement["functions"] = diagnose.functions_on_the_way([tensors[index] for index in wanted])
        measurement["rules"] = diagnose.rules_on_the_way([tensors[index] for index in wanted])
        try:
            grads = torch.autograd.grad(
                [tensors[index] for index in wanted],
                [leaf for _, leaf in leaves],
                request["cotangents"],
                allow_unused=True,
            )
            measurement["flow"] = {"grads": [arrays.tree(g) for g in grads]}
        except Exception as error:  # noqa: BLE001 - whatever the student's graph raises is reported
            measurement["flow"] = _failed(error)
    return measurement


def _holds_a_number(result) -> bool:
    """Whether `result`, or an item of the tuple or list it is, is a Python number: a tensor turned into
    one (.item()) anywhere a tensor was expected."""
    items = result if isinstance(result, tuple | list) else (result,)
    return any(isinstance(item, int | float) and not isinstance(item, bool) for item in items)
