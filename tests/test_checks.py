"""Pins what the grading checks say: right answers pass quietly, and every mistake the lessons warn about
fails the right check with a message naming where it went wrong and the likely cause.

The checks run in the pristine checker process that importing `autograder.checks` starts, exactly as
from a notebook; so these tests also pin that the checker survives hangs, crashes and tampering.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable

import cloudpickle
import pytest
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
from widths import fits

import autograder.checks
from autograder import check_first_derivative, check_forward, check_second_derivative
from autograder.records.results import one_line
from autograder.wire import samples
from solutions.saving_inputs import Square as ReferenceSquare

# The checker unpickles the Functions below in its own process, which cannot import this test module;
# cloudpickle would pickle them by reference (by module name) unless told to ship them by value, as it
# does for a notebook's __main__.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

CHECKS = [
    pytest.param(check_forward, id="forward"),
    pytest.param(check_first_derivative, id="first_derivative"),
    pytest.param(check_second_derivative, id="second_derivative"),
]
DERIVATIVE_CHECKS = CHECKS[1:]
RANDOMIZED = [pytest.param(False, id="visible"), pytest.param(True, id="randomized")]

# References, in plain torch as a lesson's test cell writes them: Python functions, whose parameter names
# name the inputs in messages (a builtin such as torch.sinh has no signature to read them from).


def square(x):
    return x**2


def sinh_and_exps(x):
    return torch.sinh(x), torch.exp(x), torch.exp(-x)


def sinh(x):
    return torch.sinh(x)


def scaled_cube(grad_out, x):
    return grad_out * 3 * x**2


# The inputs a visible check feeds to a one-argument function, in order (the default range [-2, 2)).
VISIBLE_XS = [x.detach() for (x,) in samples.inputs(1, False, -2.0, 2.0, samples.generator(False))]


def failure(check, function, reference, **options) -> str:
    """The message of the AssertionError the check raises; fails the test if the check passes.
    Every line of it fits the width students read it in; it comes back on one line, as in grades.csv."""
    with pytest.raises(AssertionError) as info:
        check(function, reference, **options)
    message = str(info.value)
    assert fits(message), message
    return one_line(message)


# Right answers.


class Square(Function):
    """x**2, saving its input: right to every order."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


class ScaledCube(Function):
    """grad_out * 3x**2 of two inputs (Cube's backward as a Function), with both gradients right."""

    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        return grad_out * 3 * x**2

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * 3 * x**2, grad * grad_out * 6 * x


class Sinh(Function):
    """sinh(x), returning exp(x) and exp(-x) as extra outputs whose gradients backward adds."""

    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + grad_expx * expx - grad_expnegx * expnegx


def sinh_only(x):
    """Sinh with its extra outputs hidden from callers."""
    return Sinh.apply(x)[0]


class SinhReturnsZeroForAMissingGradient(Sinh):
    """Right gradients, but with grads left unmaterialized it answers a missing grad_out with int 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return Sinh.forward(ctx, x)

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        if grad_out is None:
            return 0
        expx, expnegx = ctx.saved_tensors
        pairs = ((1, grad_expx, expx), (-1, grad_expnegx, expnegx))
        extras = [sign * g * t for sign, g, t in pairs if g is not None]
        return grad_out * (expx + expnegx) / 2 + sum(extras)


class SquareReturnsZeroForNone(Square):
    """Right for every gradient it is given; with grads left unmaterialized it answers None with int 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return Square.forward(ctx, x)

    @staticmethod
    def backward(ctx, grad_out):
        return 0 if grad_out is None else Square.backward(ctx, grad_out)


class SquareGivesOneForZero(Square):
    """Right for every grad_out that is not zero; for one that is all zero, it gives one, not zero."""

    @staticmethod
    def backward(ctx, grad_out):
        return Square.backward(ctx, grad_out) + float(bool((grad_out == 0).all()))


class ScaledCubeAddsIntoANewTensor(ScaledCube):
    """Right one grad_out at a time; under vmap its zeros_like(x) has no batch dimension to add into."""

    @staticmethod
    def backward(ctx, grad_out):
        grad_out_in, x = ctx.saved_tensors
        grad_x = torch.zeros_like(x)
        grad_x += grad_out * grad_out_in * 6 * x
        return grad_out * 3 * x**2, grad_x


class NoisySquare(Square):
    """A right Square that prints and warns while it computes."""

    @staticmethod
    def forward(ctx, x):
        print("computing x**2")
        print("debug: forward", file=sys.stderr)
        warnings.warn("a warning from forward", stacklevel=1)
        ctx.save_for_backward(x)
        return x**2


# Mistakes that cut backward's result from the graph: right to first order only.


class SquareDetach(Square):
    """backward detaches the saved input."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x.detach()


class SquareNumpy(Square):
    """backward computes through NumPy, without a second Function."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * torch.from_numpy(x.detach().numpy())


class SquareNoGrad(Square):
    """backward computes under torch.no_grad()."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        with torch.no_grad():
            return grad_out * 2 * x


class SinhBad(Function):
    """sinh(x) keeping exp(x) and exp(-x) as ctx attributes instead of saving them."""

    @staticmethod
    def forward(ctx, x):
        ctx.expx, ctx.expnegx = torch.exp(x), torch.exp(-x)
        return (ctx.expx - ctx.expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (ctx.expx + ctx.expnegx) / 2


# Mistakes with extra outputs.


class SinhNoExtras(Sinh):
    """backward drops the gradients that arrive for the extra outputs exp(x) and exp(-x)."""

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2


def sinh_no_extras(x):
    """SinhNoExtras with its extra outputs hidden, so only the second derivative shows the mistake."""
    return SinhNoExtras.apply(x)[0]


class SinhFlipsTheSignOfExpNegX(Sinh):
    """backward adds grad_expnegx * exp(-x), forgetting the minus of d exp(-x)/dx."""

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + grad_expx * expx + grad_expnegx * expnegx


def sinh_flipping_a_sign(x):
    return SinhFlipsTheSignOfExpNegX.apply(x)[0]


class SinhDropsGradExpNegX(Sinh):
    """backward adds the term of grad_expx but leaves out that of grad_expnegx."""

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + grad_expx * expx


def sinh_dropping_a_term(x):
    return SinhDropsGradExpNegX.apply(x)[0]


class SinhMarksExtrasNonDifferentiable(Sinh):
    """forward marks exp(x) and exp(-x) non-differentiable: no gradient reaches them, though they carry x."""

    @staticmethod
    def forward(ctx, x):
        outputs = Sinh.forward(ctx, x)
        ctx.mark_non_differentiable(*outputs[1:])
        return outputs


def sinh_marking_extras(x):
    return SinhMarksExtrasNonDifferentiable.apply(x)[0]


# Wrong formulas.


class CubeAsSquare(Square):
    """Square's forward computes x**3, with a backward consistent with that wrong forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x**2


class SignedSquare(Square):
    """forward computes x * |x|, which is wrong for negative inputs only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.abs()


class SquareIgnoresGradOut(Square):
    """backward returns the local derivative 2x without multiplying by grad_out."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x


class ScaledCubeWrongGradX(ScaledCube):
    """The gradient with respect to x misses the factor 2 of d(x**2)/dx."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * 3 * x**2, grad * grad_out * 3 * x


class ScaledCubeWrongSignGradX(ScaledCube):
    """The gradient with respect to x has its sign flipped."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * 3 * x**2, -grad * grad_out * 6 * x


class ScaledCubeForgetsGradOut(ScaledCube):
    """forward saves x alone, so the gradient for x lacks its factor grad_out."""

    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x)
        return grad_out * 3 * x**2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2, grad * 6 * x


class ScaledCubeNumpyInBackward(ScaledCube):
    """The gradient for grad_out computed in NumPy: right values, recorded by nothing."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        grad_grad_out = torch.from_numpy((grad * 3 * x**2).detach().numpy())
        return grad_grad_out, grad * grad_out * 6 * x


class ScaledCubeSwapped(ScaledCube):
    """Both gradients right, returned in the wrong order."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * grad_out * 6 * x, grad * 3 * x**2


class ScaledCubeIgnoresGrad(ScaledCube):
    """Returns the local derivatives, never multiplying by the gradient its backward receives."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return 3 * x**2, grad_out * 6 * x


class ScaledCubeDropsGradOut(ScaledCube):
    """The gradient for its input grad_out is None: a Cube built on it loses that path."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return None, grad * grad_out * 6 * x


class ScaledCubeOneGradient(ScaledCube):
    """Returns one gradient for its two inputs: autograd refuses it in the double backward."""

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * grad_out * 6 * x


def cube_through(second: type[Function]) -> Callable:
    """x**3 as a Function whose backward calls `second` (a ScaledCube variant) for grad_out * 3x**2."""

    class Cube(CubeAsSquare):
        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return second.apply(grad_out, x)

    return Cube.apply


class SquareChangesGradOutInPlace(Square):
    """backward multiplies grad_out in place: the gradient it returns is right, the tensor it was lent not."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.mul_(2 * x)


class SquareForgetsToReturn(Square):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x**2


class ExpSavesADetachedCopy(Function):
    """exp(x) saving a detached copy of its output: backward's result has no history."""

    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result.detach())
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * result


class ExpChangesItsOutputInBackward(Function):
    """exp(x) whose backward multiplies the saved output in place."""

    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return result.mul_(grad_out)


class SquareOnceDifferentiable(Square):
    """Square whose backward is marked @once_differentiable: right once, refused twice."""

    backward = staticmethod(once_differentiable(Square.backward))


class SquareWithoutSetupContext(Function):
    """forward written without ctx, but no setup_context: autograd still passes ctx to forward."""

    @staticmethod
    def forward(x):
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


class SquareWithCtxBesideSetupContext(Function):
    """forward written with ctx, the old style's, beside a setup_context: autograd calls forward(x), and ctx
    takes x."""

    @staticmethod
    def forward(ctx, x):
        return x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


def sqrt_squared(x):
    """The identity computed as sqrt(x)**2, which is NaN for negative inputs."""
    return torch.sqrt(x) ** 2


# Outputs of the wrong kind.


def square_float32(x):
    """Returns float32 for a float64 input."""
    return (x**2).float()


def square_flattened(x):
    """Returns a 1-d tensor whatever the input's shape."""
    return x.reshape(-1) ** 2


def square_and_input(x):
    """Returns an extra output the reference does not have."""
    return x**2, x


def square_in_a_list(x):
    """Returns a list instead of a tensor."""
    return [x**2]


# Unfinished or crashing code.


class SquareStub(Function):
    """Both methods as nbgrader's release leaves them."""

    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_out):
        raise NotImplementedError()


class SquareBackwardStub(Square):
    """forward written, backward still the release's stub."""

    @staticmethod
    def backward(ctx, grad_out):
        raise NotImplementedError()


class SquareTypeError(Square):
    """forward raises an error other than NotImplementedError."""

    @staticmethod
    def forward(ctx, x):
        raise TypeError("unsupported operand")


class SquareTwoGrads(Square):
    """backward returns two gradients for one input, which autograd itself rejects."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x, grad_out


class SquareLoops(Square):
    """forward never returns."""

    @staticmethod
    def forward(ctx, x):
        while True:
            pass


class SquareExits(Square):
    """forward ends the process it runs in."""

    @staticmethod
    def forward(ctx, x):
        os._exit(3)


class SquareKillsItself(Square):
    """forward kills the process it runs in."""

    @staticmethod
    def forward(ctx, x):
        os.kill(os.getpid(), signal.SIGKILL)


class SquareCrashes(Square):
    """forward ends the process it runs in as a crash in native code does."""

    @staticmethod
    def forward(ctx, x):
        os.kill(os.getpid(), signal.SIGSEGV)


class KillsTheChecker(Square):
    """forward kills the checker process that forked it, then ends its own."""

    @staticmethod
    def forward(ctx, x):
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(0)


# Answers that cheat.


def _stub_true(*args, **kwargs):
    return True


class CubeWithSquaresBackward(Square):
    """forward cubes, but backward is Square's: right for the reference, wrong for its own forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3


class CubeCallsItsBackwardWithArgumentsExchanged(CubeWithSquaresBackward):
    """Cube whose backward calls a right Function of (grad_out, x) as if it took (x, grad_out)."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return ScaledCube.apply(x, grad_out)


class ProductDetached(torch.autograd.Function):
    """grad_out * x, like a backward kernel; its own backward detaches both factors."""

    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        return grad_out * x

    @staticmethod
    def backward(ctx, grad):
        grad_out, x = ctx.saved_tensors
        return grad * x.detach(), grad * grad_out.detach()


class PatchesIsclose(Square):
    """forward makes torch.isclose say every pair is close, then returns x**3."""

    @staticmethod
    def forward(ctx, x):
        torch.isclose = lambda a, b, **kwargs: torch.ones_like(a, dtype=torch.bool)
        ctx.save_for_backward(x)
        return x**3


class PatchesAllclose(Square):
    """forward stubs torch.allclose, then returns x**3."""

    @staticmethod
    def forward(ctx, x):
        torch.allclose = _stub_true
        ctx.save_for_backward(x)
        return x**3


class PatchesGradgradcheck(Square):
    """forward stubs torch.autograd.gradgradcheck, then returns x**3."""

    @staticmethod
    def forward(ctx, x):
        torch.autograd.gradgradcheck = _stub_true
        ctx.save_for_backward(x)
        return x**3


class PatchesGradcheckModule(Square):
    """forward stubs the `gradcheck` that gradgradcheck calls, inside the torch.autograd.gradcheck module."""

    @staticmethod
    def forward(ctx, x):
        sys.modules["torch.autograd.gradcheck"].gradcheck = _stub_true
        ctx.save_for_backward(x)
        return x**3


class PatchesTensorAll(Square):
    """forward shadows Tensor.all (inherited from torch's C base class), then returns x**3."""

    @staticmethod
    def forward(ctx, x):
        torch.Tensor.all = lambda self, *args, **kwargs: torch.ones((), dtype=torch.bool)
        ctx.save_for_backward(x)
        return x**3


class BorrowedSquare(ReferenceSquare):
    """The course's reference Square, subclassed under a new name."""


def borrowed_square(x):
    """Calls the course's reference Square."""
    return ReferenceSquare.apply(x)


class CubeBorrowingInBackward(CubeWithSquaresBackward):
    """Its own forward; a backward that calls the course's reference Square (rightly: 3 x**2)."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * ReferenceSquare.apply(x)


# Outputs the visible check's inputs produce, keyed by those inputs.
_MEMORIZED = {(tuple(x.shape), x.numpy().tobytes()): x**2 for x in VISIBLE_XS}


def memorized_square(x):
    """Looks up the visible check's answers instead of computing x**2."""
    key = (tuple(x.shape), x.detach().numpy().tobytes())
    return _MEMORIZED.get(key, torch.zeros_like(x))


def square_closing_over(resource):
    """A square that holds on to `resource`, as a cell's function might keep a lock or a generator."""

    def square_with_resource(x):
        assert resource is not None
        return x**2

    return square_with_resource


# Right answers pass.


@pytest.mark.parametrize("randomized", RANDOMIZED)
@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize(
    ("function", "reference"),
    [
        pytest.param(Square.apply, square, id="square_saving_its_input"),
        pytest.param(ScaledCube.apply, scaled_cube, id="two_input_cube_backward"),
        pytest.param(Sinh.apply, sinh_and_exps, id="sinh_with_extra_outputs"),
        pytest.param(sinh_only, sinh, id="sinh_hiding_its_extra_outputs"),
    ],
)
def test_right_answer_passes_every_check(function, reference, check, randomized):
    check(function, reference, randomized=randomized)


# The line each check prints when it passes, for a Function named Square.
_PASSED = {
    "forward": "✓ Square: forward values right\n",
    "first_derivative": "✓ Square: first derivatives right\n",
    "second_derivative": "✓ Square: second derivatives right\n",
}


@pytest.mark.parametrize("check", CHECKS)
def test_passing_check_prints_one_line_saying_what_passed_and_nothing_to_stderr(check, capfd):
    check(Square.apply, square)
    assert capfd.readouterr() == (_PASSED[check.__name__.removeprefix("check_")], "")


@pytest.mark.parametrize("check", CHECKS)
def test_prints_and_warnings_in_forward_do_not_reach_the_callers_output(check, capfd):
    check(NoisySquare.apply, square, name="Square")
    assert capfd.readouterr() == (_PASSED[check.__name__.removeprefix("check_")], "")


# Cut from the graph: first derivative right, second derivative fails naming the cause.


@pytest.mark.parametrize(
    ("function", "reference", "cause"),
    [
        pytest.param(SquareDetach.apply, square, "backward uses `.detach()`", id="detach"),
        pytest.param(
            SquareNumpy.apply,
            square,
            "backward computes with NumPy: it takes the values out of torch (`.detach()` and `.numpy()`), "
            "so its result has no history. Compute the gradient with torch operations on ctx.saved_tensors "
            "and grad_out",
            id="numpy",
        ),
        pytest.param(SquareNoGrad.apply, square, "backward uses `torch.no_grad()`", id="no_grad"),
        pytest.param(
            SinhBad.apply,
            sinh,
            "forward kept ctx.expnegx, ctx.expx as plain attributes",
            id="intermediates_on_ctx",
        ),
    ],
)
def test_backward_cut_from_graph_fails_only_second_derivative_naming_the_cause(function, reference, cause):
    check_forward(function, reference)
    check_first_derivative(function, reference)
    message = failure(check_second_derivative, function, reference)
    assert message.startswith("Second derivative: the gradient is cut off from the graph.")
    assert "on x of shape ()" in message
    assert f"Likely cause: {cause}" in message


def test_backward_under_no_grad_is_reported_as_not_requiring_grad():
    message = failure(check_second_derivative, SquareNoGrad.apply, square)
    assert "grad_x computed with create_graph=True does not require grad" in message


def test_detached_backward_is_reported_as_not_depending_on_x():
    message = failure(check_second_derivative, SquareDetach.apply, square)
    assert "grad_x computed with create_graph=True does not depend on x" in message


# Extra outputs whose gradients backward drops.

EXTRA_OUTPUTS_CAUSE = (
    "Likely cause: SinhNoExtras.backward ignores the gradients that arrive for its extra outputs"
)


def test_backward_ignoring_extra_outputs_fails_first_derivative_of_the_function():
    check_forward(SinhNoExtras.apply, sinh_and_exps)
    message = failure(check_first_derivative, SinhNoExtras.apply, sinh_and_exps)
    assert message.startswith("First derivative with respect to x is wrong: SinhNoExtras on x of shape ()")
    assert EXTRA_OUTPUTS_CAUSE in message


def test_backward_ignoring_extra_outputs_behind_a_wrapper_fails_only_second_derivative():
    check_forward(sinh_no_extras, sinh)
    check_first_derivative(sinh_no_extras, sinh)
    message = failure(check_second_derivative, sinh_no_extras, sinh)
    assert message.startswith("Second derivative with respect to x is wrong:")
    assert "of sinh_no_extras on x of shape ()" in message
    assert EXTRA_OUTPUTS_CAUSE in message
    assert "cut off from the graph" not in message


# Wrong formulas.


def test_wrong_forward_fails_forward_check_with_expected_and_got():
    x = VISIBLE_XS[0]
    message = failure(check_forward, CubeAsSquare.apply, square)
    assert message == (
        f"Forward value is wrong: CubeAsSquare on x of shape (): "
        f"expected {float(x**2):.6g}, got {float(x**3):.6g} (x={float(x):.6g})."
    )


def test_forward_failure_names_the_shape_and_index_of_the_first_wrong_element():
    x = VISIBLE_XS[1]  # the scalar input is positive, where x * |x| is right
    index = int((x < 0).nonzero()[0])
    message = failure(check_forward, SignedSquare.apply, square)
    assert message == (
        f"Forward value is wrong: SignedSquare on x of shape (3,): expected {float(x[index] ** 2):.6g}, "
        f"got {float(-(x[index] ** 2)):.6g} at index [{index}] (x={float(x[index]):.6g})."
    )


def test_wrong_forward_with_consistent_backward_fails_first_derivative_blaming_forward():
    message = failure(check_first_derivative, CubeAsSquare.apply, square)
    assert message.startswith("First derivative with respect to x is wrong: CubeAsSquare on x of shape ()")
    assert "Likely cause: forward itself is wrong" in message
    assert "Your backward does match your own forward (gradcheck passes)" in message


def test_wrong_forward_with_the_references_backward_fails_first_derivative_blaming_forward():
    message = failure(check_first_derivative, CubeWithSquaresBackward.apply, square)
    assert message.startswith("gradcheck fails for CubeWithSquaresBackward on x of shape ()")
    assert "Likely cause: forward is wrong (see the forward check)" in message


def test_builtin_reference_is_refused_with_a_hint_for_the_instructor():
    with pytest.raises(TypeError, match="reference must be a Python function"):
        check_forward(Square.apply, torch.square)


def test_input_called_grad_out_is_not_confused_with_the_gradient_fed_to_backward():
    message = failure(check_second_derivative, ProductDetached.apply, lambda grad_out, x: grad_out * x)
    # grad_grad_out = grad * x rightly does not depend on grad_out: only the gradient for x is named, and not
    # as grad_x, which in such a Function, another's backward, commonly names its output.
    assert (
        "the gradient its backward returns for x, taken with create_graph=True, does not depend on grad_out"
        in message
    )


def test_wrong_forward_with_consistent_backward_fails_second_derivative_as_already_wrong():
    message = failure(check_second_derivative, CubeAsSquare.apply, square)
    assert message == (
        "Second derivative: CubeAsSquare's forward is wrong (see the forward check); fix it first."
    )


def test_wrong_forward_with_the_references_backward_earns_nothing_for_its_second_derivative():
    """Its backward is Square's, right to every order, but the Function is not Square: the second-derivative
    check, half of an exercise's marks, is not earned by a backward alone."""
    message = failure(check_second_derivative, CubeWithSquaresBackward.apply, square)
    assert message.startswith("Second derivative: CubeWithSquaresBackward's forward is wrong")


def test_backward_ignoring_grad_out_fails_first_derivative_with_the_chain_rule_hint():
    check_forward(SquareIgnoresGradOut.apply, square)
    message = failure(check_first_derivative, SquareIgnoresGradOut.apply, square)
    assert message.startswith("First derivative with respect to x is wrong")
    assert "with a random grad_out" in message
    assert "Likely cause: backward returns the local derivative without multiplying by grad_out" in message


def test_backward_calling_a_function_with_its_arguments_exchanged_is_named():
    check_forward(CubeCallsItsBackwardWithArgumentsExchanged.apply, lambda x: x**3)
    message = failure(
        check_first_derivative, CubeCallsItsBackwardWithArgumentsExchanged.apply, lambda x: x**3
    )
    assert message.startswith("First derivative with respect to x is wrong")
    assert "Likely cause: x and grad_out are exchanged" in message


def test_backward_ignoring_grad_out_shows_the_grad_out_it_was_given_where_it_went_wrong():
    message = failure(check_first_derivative, SquareIgnoresGradOut.apply, square)
    (grad_out,) = samples.like([VISIBLE_XS[0]], _visible_generator_after_first_inputs())
    assert f"with a random grad_out = {float(grad_out):.6g}: expected" in message


class SquareSummingGradOut(Square):
    """x**2 with a backward that sums grad_out: right on a one-element x, wrong on any other."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.sum() * 2 * x


def test_a_derivative_wrong_on_several_elements_shows_the_grad_out_at_the_first_wrong_one():
    message = failure(check_first_derivative, SquareSummingGradOut.apply, square)
    assert re.search(
        r"with a random grad_out \(which is -?[0-9.e+-]+ at the first wrong element\): expected", message
    )


def _visible_generator_after_first_inputs() -> torch.Generator:
    """The visible check's generator once it has drawn the first sample's input."""
    gen = samples.generator(False)
    next(samples.inputs(1, False, -2.0, 2.0, gen))
    return gen


def test_backward_changing_grad_out_in_place_fails_first_derivative_naming_it():
    """Its gradient is right, but autograd may hand the same grad_out to other parts of the graph; the
    message shows the grad_out the check gave and what backward left in it."""
    message = failure(check_first_derivative, SquareChangesGradOutInPlace.apply, square)
    x = VISIBLE_XS[0]
    (grad_out,) = samples.like([x], _visible_generator_after_first_inputs())
    assert message.startswith(
        "First derivative: the backward of SquareChangesGradOutInPlace changes grad_out in place, on x of "
        f"shape (): {float(grad_out):.6g} became {float(grad_out * 2 * x):.6g}."
    )
    assert "Compute grad_x into a new tensor" in message


def test_backward_changing_grad_out_in_place_fails_second_derivative_naming_it_not_a_leaf():
    """With create_graph=True, grad_out requires grad and autograd refuses the change with its words about
    a leaf; the message says it was grad_out that backward changed, shown as in a first backward."""
    message = failure(check_second_derivative, SquareChangesGradOutInPlace.apply, square)
    assert message.startswith(
        "Second derivative: the backward of SquareChangesGradOutInPlace changes grad_out in place, on x of "
        "shape ():"
    )
    assert "a leaf Variable that requires grad is being used in an in-place operation" in message
    assert "in a double backward grad_out requires grad (gradgradcheck makes it a leaf)" in message
    assert "Build a new tensor: grad_x = grad_out * (...)." in message


@pytest.mark.parametrize("check", CHECKS)
def test_forward_that_forgets_to_return_is_named_by_every_check(check):
    message = failure(check, SquareForgetsToReturn.apply, square)
    assert message.startswith("SquareForgetsToReturn returns None where a tensor should be.")
    assert "does not `return` it" in message


@pytest.mark.parametrize(
    ("check", "function", "reference"),
    [
        pytest.param(
            check_first_derivative, SinhMarksExtrasNonDifferentiable.apply, sinh_and_exps, id="apply"
        ),
        pytest.param(check_second_derivative, sinh_marking_extras, sinh, id="behind_a_wrapper"),
    ],
)
def test_extra_outputs_marked_non_differentiable_are_named(check, function, reference):
    message = failure(check, function, reference)
    assert "Likely cause: forward marks its extra outputs non-differentiable" in message
    assert "cut off" not in message


@pytest.mark.parametrize(
    ("function", "reference", "check", "fault"),
    [
        pytest.param(
            SinhFlipsTheSignOfExpNegX.apply,
            sinh_and_exps,
            check_first_derivative,
            "has the wrong sign",
            id="sign_first_derivative",
        ),
        pytest.param(
            sinh_flipping_a_sign,
            sinh,
            check_second_derivative,
            "has the wrong sign",
            id="sign_behind_a_wrapper",
        ),
        pytest.param(
            SinhDropsGradExpNegX.apply,
            sinh_and_exps,
            check_first_derivative,
            "is left out",
            id="left_out_first_derivative",
        ),
        pytest.param(
            sinh_dropping_a_term, sinh, check_second_derivative, "is left out", id="left_out_behind_a_wrapper"
        ),
    ],
)
def test_one_wrong_extra_output_term_is_named_by_backwards_argument(function, reference, check, fault):
    message = failure(check, function, reference)
    assert f".backward, the term of grad_expnegx, the gradient of output 2, {fault}." in message
    assert "not built from torch operations" not in message


def test_right_extra_output_terms_are_not_blamed_for_another_mistake():
    """Every term checks out against finite differences, so the message names the formula's slip: the
    second derivative is half the right one."""
    message = failure(check_second_derivative, cube_through(ScaledCubeWrongGradX), lambda x: x**3)
    assert "the term of" not in message
    assert "Likely cause: this derivative is half the right one" in message
    assert "not built from torch operations" not in message


@pytest.mark.parametrize(
    ("function", "reference", "check", "wrong"),
    [
        pytest.param(
            ScaledCubeForgetsGradOut.apply,
            scaled_cube,
            check_first_derivative,
            "First",
            id="first_derivative",
        ),
        pytest.param(
            cube_through(ScaledCubeForgetsGradOut),
            lambda x: x**3,
            check_second_derivative,
            "Second",
            id="through_cube",
        ),
    ],
)
def test_gradient_missing_a_factor_names_the_factor(function, reference, check, wrong):
    message = failure(check, function, reference)
    assert message.startswith(f"{wrong} derivative with respect to x is wrong")
    assert "Likely cause: this derivative is missing the factor grad_out: multiplied by grad_out" in message


def test_a_factor_missing_through_a_called_function_is_blamed_on_its_backward():
    message = failure(check_second_derivative, cube_through(ScaledCubeForgetsGradOut), lambda x: x**3)
    assert "ScaledCubeForgetsGradOut.backward, which leaves grad_out out" in message
    assert "must be saved" not in message


class ScaledSquareForgetsW(Function):
    """w * x**2, saving both inputs, whose grad_x leaves out the factor w it has at hand."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return w * x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, _ = ctx.saved_tensors  # w, saved, is left out below
        return grad_out * 2 * x, grad_out * x**2


def test_a_factor_forward_saved_is_not_blamed_on_saving():
    message = failure(check_first_derivative, ScaledSquareForgetsW.apply, lambda x, w: w * x**2)
    assert "missing the factor w: multiplied by w, it would be right. Forward saved w, so backward" in message
    assert "must be saved" not in message


def test_untracked_term_of_a_double_backward_is_named_where_its_code_tells():
    check_first_derivative(ScaledCubeNumpyInBackward.apply, scaled_cube)
    message = failure(check_second_derivative, ScaledCubeNumpyInBackward.apply, scaled_cube)
    assert message.startswith("Second derivative with respect to x is wrong")
    assert "Likely cause: backward computes with NumPy" in message


def test_wrong_gradient_of_a_two_input_function_names_the_input_by_the_references_parameter():
    check_forward(ScaledCubeWrongGradX.apply, scaled_cube)
    message = failure(check_first_derivative, ScaledCubeWrongGradX.apply, scaled_cube)
    assert message.startswith(
        "First derivative with respect to x is wrong: ScaledCubeWrongGradX on grad_out, x of shape ()"
    )
    assert "Likely cause: this derivative is half the right one: a factor 2 left out" in message


def test_gradient_with_its_sign_flipped_is_named_as_such():
    message = failure(check_first_derivative, ScaledCubeWrongSignGradX.apply, scaled_cube)
    assert message.startswith("First derivative with respect to x is wrong")
    assert "Likely cause: this derivative has the wrong sign: negated, it would be right." in message


def test_gradients_returned_in_the_wrong_order_are_named_as_swapped():
    message = failure(check_first_derivative, ScaledCubeSwapped.apply, scaled_cube)
    assert message.startswith("First derivative with respect to grad_out is wrong")
    assert (
        "Likely cause: backward returns the gradient for x in the place of grad_out: it returns them in the "
        "wrong order." in message
    )


def test_input_called_grad_out_is_not_blamed_for_the_gradient_backward_ignores():
    message = failure(check_first_derivative, ScaledCubeIgnoresGrad.apply, scaled_cube)
    assert "with a random gradient fed to backward = " in message
    assert "without multiplying by the gradient fed to backward (backward's argument after ctx)" in message


def test_second_function_dropping_the_incoming_gradient_is_named():
    message = failure(check_second_derivative, cube_through(ScaledCubeDropsGradOut), lambda x: x**3)
    assert message.startswith("Second derivative with respect to grad_out is wrong")
    assert "must return a gradient for the incoming gradient it was given too, not None" in message


class SquareDetachingGradOut(Square):
    """x**2 with a backward that detaches grad_out: right first derivatives, none in grad_out after."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out.detach() * 2 * x


def test_detached_grad_out_is_named_and_no_second_function_is_blamed():
    message = failure(check_second_derivative, SquareDetachingGradOut.apply, lambda x: x**2)
    assert message.startswith("Second derivative with respect to grad_out is wrong")
    assert "the gradient with respect to grad_out is lost: keep grad_out attached" in message
    assert "backward uses `.detach()`" in message
    assert "Function" not in message.split("Likely cause:")[1]


def test_second_derivative_shows_the_random_weight_it_differentiated_with():
    message = failure(check_second_derivative, SquareDetachingGradOut.apply, lambda x: x**2)
    assert re.search(
        r"as sum\(v \* grad_x\) with a random v = -?[0-9.e+-]+ and grad_x taken with a random grad_out = "
        r"-?[0-9.e+-]+: expected",
        message,
    )


class SquareInFloat32(Square):
    """x**2 returned in float32, with the right backward: only gradcheck's finite differences miss."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x**2).float()


def test_float32_forward_is_blamed_on_its_dtype_not_on_a_derivative_formula():
    message = failure(check_first_derivative, SquareInFloat32.apply, lambda x: x**2)
    assert "forward returns a dtype of lower precision than its input" in message
    assert "not the derivatives of your forward" not in message


class SquareBackwardOfTheCube(Square):
    """x**2 with the cube's derivative, 3 x**2, in backward."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 3 * x**2


def test_a_known_slip_in_backward_is_named_by_its_cause():
    mistakes = {"backward gives the cube's derivative.": lambda x: x**3, "never this.": lambda x: -x}
    message = failure(
        check_first_derivative, SquareBackwardOfTheCube.apply, lambda x: x**2, mistakes=mistakes
    )
    assert "Likely cause: backward gives the cube's derivative." in message
    assert "never this" not in message


def test_two_known_slips_giving_the_same_gradient_are_both_named():
    mistakes = {
        "backward gives the cube's derivative.": lambda x: x**3,
        "backward differentiates x**3 + 1.": lambda x: x**3 + 1,
        "never this.": lambda x: -x,
    }
    message = failure(
        check_first_derivative, SquareBackwardOfTheCube.apply, lambda x: x**2, mistakes=mistakes
    )
    assert (
        "Likely cause: backward gives the cube's derivative. Or: backward differentiates x**3 + 1." in message
    )
    assert "never this" not in message


def test_mistakes_are_refused_by_the_forward_check():
    with pytest.raises(TypeError, match="mistakes are for the checks of a derivative"):
        check_forward(Square.apply, lambda x: x**2, mistakes={"never.": lambda x: x})


def test_second_function_returning_too_few_gradients_is_reported_not_crashed():
    message = failure(check_second_derivative, cube_through(ScaledCubeOneGradient), lambda x: x**3)
    assert message.startswith("Second derivative: differentiating the gradient of Cube on x of shape ()")
    assert "returned an incorrect number of gradients" in message
    assert "one gradient per input of forward, in order" in message


def test_saving_a_detached_copy_is_named_as_the_cut():
    message = failure(check_second_derivative, ExpSavesADetachedCopy.apply, lambda x: torch.exp(x))
    assert message.startswith("Second derivative: the gradient is cut off from the graph.")
    assert "Likely cause: forward saved a tensor with no history" in message


def test_changing_the_saved_output_in_place_in_backward_is_named_by_both_derivative_checks():
    first = failure(check_first_derivative, ExpChangesItsOutputInBackward.apply, lambda x: torch.exp(x))
    assert first.startswith("gradcheck fails for ExpChangesItsOutputInBackward")
    assert "Likely cause: backward changes a tensor in place (e.g. result.mul_(grad_out))" in first
    second = failure(check_second_derivative, ExpChangesItsOutputInBackward.apply, lambda x: torch.exp(x))
    assert "modified by an inplace operation" in second
    assert "Likely cause: a tensor autograd saved for backward was changed in place afterwards" in second


def test_once_differentiable_backward_reaches_the_checker_and_is_named_as_the_cut():
    check_first_derivative(SquareOnceDifferentiable.apply, square)
    message = failure(check_second_derivative, SquareOnceDifferentiable.apply, square)
    assert "Likely cause: backward is marked @once_differentiable" in message


def test_new_style_forward_without_setup_context_is_named():
    message = failure(check_forward, SquareWithoutSetupContext.apply, square)
    assert message.startswith("SquareWithoutSetupContext on x of shape () raised TypeError: ")
    assert "needs a setup_context(ctx, inputs, output) staticmethod" in message


@pytest.mark.parametrize("check", [check_forward, check_first_derivative])
def test_forward_taking_ctx_beside_setup_context_is_named(check):
    message = failure(check, SquareWithCtxBesideSetupContext.apply, square)
    assert message.startswith(
        "SquareWithCtxBesideSetupContext on x of shape () raised TypeError: missing a required argument"
    )
    assert (
        "Likely cause: SquareWithCtxBesideSetupContext defines setup_context, so autograd calls forward with "
        "the inputs alone, forward(x), and its first parameter `ctx` took x." in message
    )


def test_name_argument_names_the_function_in_messages():
    message = failure(check_forward, CubeAsSquare.apply, square, name="Square")
    assert message.startswith("Forward value is wrong: Square on x of shape ()")


def test_inputs_are_drawn_from_low_to_high():
    assert "got nan" in failure(check_forward, sqrt_squared, lambda x: x)
    check_forward(sqrt_squared, lambda x: x, low=0.1, high=2.0)


# Outputs of the wrong kind.


@pytest.mark.parametrize(
    ("function", "problem"),
    [
        pytest.param(
            square_float32,
            "got dtype torch.float32 instead of torch.float64: keep the input's dtype",
            id="float32",
        ),
        pytest.param(square_flattened, "got shape (1,) instead of ()", id="shape"),
        pytest.param(square_in_a_list, "got a list instead of a tensor", id="list"),
    ],
)
def test_output_of_the_wrong_kind_fails_forward_saying_what_is_wrong(function, problem):
    message = failure(check_forward, function, square)
    assert message == f"Forward value is wrong: {function.__name__} on x of shape (): {problem}."


@pytest.mark.parametrize("check", CHECKS)
def test_wrong_number_of_outputs_fails_every_check(check):
    message = failure(check, square_and_input, square)
    assert message == (
        "square_and_input returns 2 output(s); it should return 1. Likely cause: square_and_input returns "
        "a tuple; return the one tensor asked for (of a Function with extra outputs, the first: "
        "`.apply(x)[0]`)."
    )


# Unfinished or crashing code.


@pytest.mark.parametrize("check", CHECKS)
def test_stub_forward_is_reported_as_not_written_yet(check):
    message = failure(check, SquareStub.apply, square)
    assert message.startswith("SquareStub.forward is not written yet: calling it raises NotImplementedError.")
    assert "Replace the line `raise NotImplementedError(...)` with your code." in message


@pytest.mark.parametrize("check", DERIVATIVE_CHECKS)
def test_stub_backward_is_reported_as_backward_not_written_yet(check):
    check_forward(SquareBackwardStub.apply, square)
    message = failure(check, SquareBackwardStub.apply, square)
    assert message == "The backward of SquareBackwardStub is not written yet: it raises NotImplementedError."


def square_stub(x):
    """A plain function left as the release leaves it."""
    raise NotImplementedError()


def squared_through_the_stub(x):
    """What a test cell defines around the student's function: it is not the one to write."""
    return square_stub(x)


def test_stub_behind_a_function_of_the_test_is_the_one_named():
    message = failure(check_forward, squared_through_the_stub, square)
    assert message.startswith("square_stub is not written yet: calling it raises NotImplementedError.")


def test_torchs_own_not_implemented_error_is_reported_as_raised_not_as_unwritten():
    """A Function without jvp in forward mode: torch raises NotImplementedError, not a stub of the release."""

    def tangent(x):
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(x, torch.ones_like(x))
            return torch.autograd.forward_ad.unpack_dual(Square.apply(dual)).tangent

    message = failure(check_forward, tangent, lambda x: 2 * x)
    assert message.startswith(
        "tangent on x of shape () raised NotImplementedError: You must implement the jvp function"
    ), message


@pytest.mark.parametrize("check", CHECKS)
def test_error_in_forward_names_the_exception_and_the_input_shape(check):
    """The input is named as a wrong forward value names it: right after the Function."""
    message = failure(check, SquareTypeError.apply, square)
    assert message == "SquareTypeError on x of shape () raised TypeError: unsupported operand"


def test_error_in_backward_names_the_exception_and_the_input_shape():
    message = failure(check_first_derivative, SquareTwoGrads.apply, square)
    assert message.startswith("The backward of SquareTwoGrads on x of shape () raised RuntimeError: ")
    assert "returned an incorrect number of gradients (expected 1, got 2)" in message
    assert message.endswith(
        " (expected 1, got 2) Likely cause: SquareTwoGrads.backward (its node is SquareTwoGradsBackward) "
        "returns a count of gradients other than its forward's inputs. Return one gradient per input of "
        "forward, in order, each a tensor or None (for an input that needs none): for one input, the tensor "
        "itself or a tuple of one; for several, a tuple. Autograd counts a list, or a tensor returned alone, "
        "as one."
    )


# The checker survives what student code does to it.


def test_endless_forward_times_out_and_the_checker_still_works():
    message = failure(check_forward, SquareLoops.apply, square, timeout=2)
    assert message.startswith("Your code did not finish within 2 s.")
    assert "Look for a loop that never ends in forward or backward." in message
    check_forward(Square.apply, square)


@pytest.mark.parametrize(
    ("function", "cause"),
    [
        pytest.param(SquareExits.apply, "exit code 3", id="os_exit"),
        pytest.param(SquareKillsItself.apply, "SIGKILL", id="sigkill"),
        pytest.param(SquareCrashes.apply, "SIGSEGV", id="sigsegv"),
    ],
)
def test_forward_ending_its_process_is_reported_and_the_checker_still_works(function, cause):
    message = failure(check_forward, function, square)
    assert message.startswith(f"Your code ended the checker process ({cause}) before it could answer.")
    # Each way of ending is told only its own causes: a crash in native code is no call to sys.exit.
    assert ("sys.exit" in message) == cause.startswith("exit code")
    assert ("crashed in native code" in message) == (cause == "SIGSEGV")
    check_forward(Square.apply, square)


def test_killing_the_checker_fails_that_check_and_the_next_check_restarts_it():
    # Outside a notebook the checker starts at the first check, which may not have run in this process.
    autograder.checks._checker.start()
    killed = autograder.checks._checker._process
    message = failure(check_forward, KillsTheChecker.apply, square)
    assert message == "The checker process stopped unexpectedly; run this cell again."
    assert killed.wait(timeout=5) == -signal.SIGKILL
    assert killed.stdin.closed
    assert killed.stdout.closed
    check_forward(Square.apply, square)
    assert autograder.checks._checker._process.pid != killed.pid


# What torch loads on a transform's first use, the checker loads once the kernel or a child has used it.
_LAZY_LOADING = """
import json, os, sys, torch
from autograder.checker import server

def loaded():
    return [module for module in server._RUN_TO_LOAD if module in sys.modules]

server._warm_up()
states = [loaded()]
requests, _ = os.pipe()
x = torch.rand(3, dtype=torch.double)
server._collect(*server._fork(lambda: {"jvp": torch.func.jvp(torch.sin, (x,), (x,))[1]}, ()), requests, 30)
states.append(loaded())
server._load(["torch._dynamo", "not.a.module"])  # as a check's header names them
states.append(loaded())
print(json.dumps(states))
"""


def test_the_checker_loads_torchs_lazy_modules_only_once_a_child_or_the_kernel_has():
    ran = subprocess.run(
        [sys.executable, "-c", _LAZY_LOADING], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(ran.stdout) == [
        [],
        ["torch._decomp.decompositions_for_jvp"],
        ["torch._dynamo", "torch._decomp.decompositions_for_jvp"],
    ]


# Cheating does not pay.


@pytest.mark.parametrize("check", CHECKS[:2])
@pytest.mark.parametrize(
    ("function", "replaced"),
    [
        pytest.param(PatchesIsclose.apply, "torch.isclose", id="isclose"),
        pytest.param(PatchesAllclose.apply, "torch.allclose", id="allclose"),
        pytest.param(PatchesGradgradcheck.apply, "torch.autograd.gradgradcheck", id="gradgradcheck"),
        pytest.param(
            PatchesGradcheckModule.apply, "torch.autograd.gradcheck.gradcheck", id="gradcheck_module"
        ),
        pytest.param(PatchesTensorAll.apply, "Tensor.all", id="inherited_tensor_method"),
    ],
)
def test_patching_torch_while_checked_does_not_make_a_wrong_answer_pass(function, replaced, check):
    """The comparison runs in the checker on plain numbers, never where the answer's patches live: a
    forward that patches `replaced` and cubes fails on its values, named as a wrong forward."""
    message = failure(check, function, square)
    assert "forward is wrong" in message or message.startswith("Forward value is wrong")
    assert "replaced" not in message


def test_patching_torch_in_the_callers_process_does_not_make_a_wrong_answer_pass(monkeypatch):
    monkeypatch.setattr(torch, "allclose", _stub_true)
    monkeypatch.setattr(torch, "isclose", lambda a, b, **kwargs: torch.ones_like(a, dtype=torch.bool))
    monkeypatch.setattr(torch.autograd, "gradcheck", _stub_true)
    monkeypatch.setattr(torch.autograd, "gradgradcheck", _stub_true)
    assert failure(check_forward, CubeAsSquare.apply, square).startswith("Forward value is wrong")
    assert "forward itself is wrong" in failure(check_first_derivative, CubeAsSquare.apply, square)
    assert "forward is wrong" in failure(check_second_derivative, CubeAsSquare.apply, square)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize(
    "function",
    [
        pytest.param(ReferenceSquare.apply, id="imported"),
        pytest.param(BorrowedSquare.apply, id="subclassed"),
        pytest.param(borrowed_square, id="called"),
    ],
)
def test_answer_using_the_reference_implementation_gets_no_credit(function, check):
    message = failure(check, function, square)
    assert message.startswith(
        "Your answer uses the course's reference implementation (the `solutions` package)"
    )
    assert message.endswith("this check gives no credit.")


def test_answer_using_the_reference_only_in_backward_keeps_its_own_forward():
    """As under the class grader, where the import fails in the notebook: what the answer's own code
    computes earns its mark; every check that reaches the reference gets none."""
    check_forward(CubeBorrowingInBackward.apply, lambda x: x**3)
    for check in (check_first_derivative, check_second_derivative):
        message = failure(check, CubeBorrowingInBackward.apply, lambda x: x**3)
        assert message.startswith("Your answer uses the course's reference implementation"), message


def test_backward_returning_a_number_for_a_missing_gradient_is_named_not_called_erratic():
    """Differentiating one output at a time, as gradcheck does, hands backward None for the others."""
    check_forward(SinhReturnsZeroForAMissingGradient.apply, sinh_and_exps)
    for check in (check_first_derivative, check_second_derivative):
        message = failure(check, SinhReturnsZeroForAMissingGradient.apply, sinh_and_exps)
        assert "expected Variable or None (got int)" in message
        assert "Likely cause: backward returns a number (such as 0) where a gradient belongs" in message
        assert "one call to the next" not in message


def test_backward_returning_a_number_when_every_gradient_is_none_fails_as_gradcheck_does():
    """gradcheck's check_undefined_grad hands backward None for every output; a number is refused."""
    check_forward(SquareReturnsZeroForNone.apply, square)
    message = failure(check_first_derivative, SquareReturnsZeroForNone.apply, square)
    assert message.startswith(
        "gradcheck fails for SquareReturnsZeroForNone on x of shape (): SquareReturnsZeroForNone.backward "
        "returned the int 0 when every incoming gradient was None: return None or a zero tensor."
    ), message


def test_backward_giving_a_gradient_for_a_zero_grad_out_fails_as_gradcheck_does():
    """gradcheck feeds a zero grad_out and wants zero back: every term is multiplied by grad_out."""
    check_forward(SquareGivesOneForZero.apply, square)
    message = failure(check_first_derivative, SquareGivesOneForZero.apply, square)
    assert message.startswith(
        "gradcheck fails for SquareGivesOneForZero on x of shape (): with every grad_out zero, backward "
        "gives a nonzero gradient for x; it must give zero (or None)."
    ), message


def test_backward_that_fails_under_vmap_fails_a_batched_check_only():
    """batched=True adds gradcheck's check_batched_grad: a batch of grad_outs at once, under vmap."""
    check_first_derivative(ScaledCubeAddsIntoANewTensor.apply, scaled_cube)
    message = failure(check_first_derivative, ScaledCubeAddsIntoANewTensor.apply, scaled_cube, batched=True)
    assert message.startswith(
        "gradcheck fails for ScaledCubeAddsIntoANewTensor on grad_out, x of shape (): fed a batch of "
        "incoming gradients at once under vmap"
    ), message
    assert (
        "Likely cause: backward changes in place (g += ..., g *= grad_out, g.mul_(grad_out)) a tensor g"
        in message
    )
    check_first_derivative(ScaledCube.apply, scaled_cube, batched=True)
    check_second_derivative(ScaledCube.apply, scaled_cube, batched=True)


def test_forward_check_refuses_the_batched_option():
    with pytest.raises(TypeError, match="batched is for the checks of a derivative"):
        check_forward(Square.apply, square, batched=True)


def test_hard_coded_visible_answers_pass_visible_but_fail_randomized_check():
    check_forward(memorized_square, square)
    message = failure(check_forward, memorized_square, square, randomized=True)
    assert message.startswith("Forward value is wrong: memorized_square on x of shape ")


def test_visible_checks_repeat_their_inputs_and_randomized_checks_draw_new_ones():
    visible = {failure(check_forward, CubeAsSquare.apply, square) for _ in range(2)}
    randomized = {failure(check_forward, CubeAsSquare.apply, square, randomized=True) for _ in range(2)}
    assert len(visible) == 1
    assert len(randomized) == 2


# Functions the checker cannot receive.


@pytest.mark.parametrize(
    ("resource", "reason"),
    [
        pytest.param(threading.Lock(), "TypeError: cannot pickle '_thread.lock' object", id="lock"),
        pytest.param((i for i in range(3)), "TypeError: cannot pickle 'generator' object", id="generator"),
    ],
)
def test_function_that_cannot_be_pickled_fails_saying_it_could_not_be_sent(resource, reason):
    message = failure(check_forward, square_closing_over(resource), square)
    assert message == (
        f"Could not send square_with_resource to the checker ({reason}). "
        "Define it at the top level of a cell, using only tensors, modules and functions."
    )


# Forgeries: answers that try to pass without computing. The checker compares plain numbers in a
# process where none of the answer's code runs, so each fails on what it really computed.

_PASSING = b'{"passed": true, "message": ""}'
_FRAMED_PASS = len(_PASSING).to_bytes(4, "big") + _PASSING


class WritesAPassingVerdict(Square):
    """forward writes a framed passing verdict to every descriptor its process holds, then exits."""

    @staticmethod
    def forward(ctx, x):
        for fd in range(3, 64):
            with contextlib.suppress(OSError):
                os.write(fd, _FRAMED_PASS)
        os._exit(0)


class LyingTensor(torch.Tensor):
    """Zeros that say they are close to, and equal to, anything."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.Tensor.eq, torch.eq, torch.Tensor.__eq__):
            return torch.ones_like(torch.Tensor._make_subclass(torch.Tensor, args[0]), dtype=torch.bool)
        if func in (torch.allclose, torch.equal, torch.Tensor.__bool__):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


class ReturnsLyingZeros(Function):
    """Computes nothing: zeros that lie, forward and backward."""

    @staticmethod
    def forward(ctx, x):
        return torch.zeros_like(x).as_subclass(LyingTensor)

    @staticmethod
    def backward(ctx, grad_out):
        return torch.zeros_like(grad_out).as_subclass(LyingTensor)


class AgreeingMode(torch.overrides.TorchFunctionMode):
    """Left pushed by the answer: every comparison says close."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.Tensor.isclose):
            return torch.ones(args[0].shape, dtype=torch.bool)
        if func in (torch.allclose, torch.equal):
            return True
        return func(*args, **(kwargs or {}))


class PushesAnAgreeingMode(Function):
    """Computes nothing, forward and backward, and leaves a mode that agrees with everything."""

    @staticmethod
    def forward(ctx, x):
        AgreeingMode().__enter__()
        return torch.zeros_like(x)

    @staticmethod
    def backward(ctx, grad_out):
        return torch.zeros_like(grad_out)


class ThreadKeepsWriting(Square):
    """forward leaves a thread writing passing verdicts to every descriptor, and returns zeros."""

    @staticmethod
    def forward(ctx, x):
        def forge():
            while True:
                for fd in range(3, 64):
                    with contextlib.suppress(OSError):
                        os.write(fd, _FRAMED_PASS)

        threading.Thread(target=forge, daemon=True).start()
        ctx.save_for_backward(x)
        return torch.zeros_like(x)


class _RunsWhenUnpickled:
    """Code that runs where it is unpickled: it writes a passing verdict everywhere it can."""

    def __reduce__(self):
        forge = "import os\nfor fd in range(3, 64):\n    try: os.write(fd, FORGED)\n    except OSError: pass"
        forge = forge.replace("FORGED", repr(_FRAMED_PASS))
        return (exec, (forge,))


_HOOK = _RunsWhenUnpickled()


def zeros_with_a_reduce_hook(x):
    """Pickled with the object above, so its code runs wherever this function is unpickled."""
    assert _HOOK is not None
    return torch.zeros_like(x)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize(
    "function",
    [
        pytest.param(WritesAPassingVerdict.apply, id="verdict_on_every_pipe"),
        pytest.param(ReturnsLyingZeros.apply, id="tensor_subclass_lying_to_isclose"),
        pytest.param(PushesAnAgreeingMode.apply, id="torch_function_mode_left_pushed"),
        pytest.param(ThreadKeepsWriting.apply, id="thread_still_writing"),
        pytest.param(zeros_with_a_reduce_hook, id="code_in_reduce"),
    ],
)
def test_forgeries_get_no_credit(function, check):
    failure(check, function, square)
    check_forward(Square.apply, square)
