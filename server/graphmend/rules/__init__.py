"""The rule registry: an explicit tuple, checked for unique codes at import time."""

from __future__ import annotations

from .base import ProgramRule, RecordedRule, Rule
from .gm101_data_dependent_if import DataDependentIf
from .gm102_data_dependent_ternary import DataDependentTernary
from .gm103_tensor_truthiness import TensorTruthiness
from .gm201_print import PrintCall
from .gm202_logging import LoggingCall
from .gm203_warnings import WarningsWarn
from .gm204_stale_message_site import StaleMessageSite
from .gm301_scalar_conversion import ScalarConversion
from .gm302_dynamic_shape import DynamicShapeOperator
from .gm303_data_dependent_while import DataDependentWhile
from .gm304_data_dependent_raise import DataDependentRaise
from .gm305_requires_grad_store import RequiresGradStore
from .gm306_tensor_data_store import TensorDataStore
from .gm307_untraceable_call import UntraceableCall
from .gm308_numpy_scalar import NumpyScalar
from .gm309_tensor_as_size import TensorAsSize
from .gm310_autograd_in_compiled_code import AutogradInCompiledCode
from .gm311_unsupported_numpy_call import UnsupportedNumpyCall
from .gm312_non_tensor_torch_call import NonTensorTorchCall
from .gm313_deliberate_graph_break import DeliberateGraphBreak
from .gm314_disabled_function_call import DisabledFunctionCall
from .gm315_data_dependent_bool_op import DataDependentBoolOp
from .gm316_class_in_compiled_code import ClassInCompiledCode
from .gm317_checkpoint_side_effect import CheckpointSideEffect
from .gm318_unhandled_raise import UnhandledRaise
from .gm319_outside_context_manager import OutsideContextManager
from .gm320_operator_on_object import OperatorOnObject
from .gm401_cpu_tensor_attribute import CpuTensorAttribute
from .gm402_masked_index_put import MaskedIndexPut
from .gm403_mutated_input import MutatedInput
from .gm404_control_flow_operator import ControlFlowOperator
from .gm405_changing_python_number import ChangingPythonNumber
from .gm501_recorded_graph_break import RecordedGraphBreak
from .gm502_recorded_recompile import RecordedRecompile
from .gm503_recorded_compile_failure import RecordedCompileFailure
from .gm504_recorded_cudagraph_skip import RecordedCudagraphSkip
from .gm601_changing_number import ChangingNumber
from .gm602_changing_module_state import ChangingModuleState
from .gm603_compile_in_loop import CompileInLoop
from .gm604_changing_global_state import ChangingGlobalState
from .gm605_changing_shapes import ChangingShapes

RULES: tuple[type[Rule], ...] = (
    DataDependentIf,
    DataDependentTernary,
    TensorTruthiness,
    PrintCall,
    LoggingCall,
    WarningsWarn,
    StaleMessageSite,
    ScalarConversion,
    DynamicShapeOperator,
    DataDependentWhile,
    DataDependentRaise,
    RequiresGradStore,
    TensorDataStore,
    UntraceableCall,
    NumpyScalar,
    TensorAsSize,
    AutogradInCompiledCode,
    UnsupportedNumpyCall,
    NonTensorTorchCall,
    DeliberateGraphBreak,
    DisabledFunctionCall,
    DataDependentBoolOp,
    ClassInCompiledCode,
    CheckpointSideEffect,
    UnhandledRaise,
    OutsideContextManager,
    OperatorOnObject,
    CpuTensorAttribute,
    MaskedIndexPut,
    MutatedInput,
    ControlFlowOperator,
    ChangingPythonNumber,
    RecordedGraphBreak,
    RecordedRecompile,
    RecordedCompileFailure,
    RecordedCudagraphSkip,
    ChangingNumber,
    ChangingModuleState,
    CompileInLoop,
    ChangingGlobalState,
    ChangingShapes,
)


def _check_registry(rules: tuple[type[Rule], ...]) -> dict[str, type[Rule]]:
    by_code: dict[str, type[Rule]] = {}
    for rule in rules:
        if rule.code in by_code:
            raise RuntimeError(f"duplicate rule code {rule.code}: {by_code[rule.code].__name__}, {rule.__name__}")
        by_code[rule.code] = rule
    return by_code


RULES_BY_CODE = _check_registry(RULES)
RECORDED_RULES: dict[str, type[RecordedRule]] = {  # event kind → the rule reporting it
    rule.event_kind: rule for rule in RULES if issubclass(rule, RecordedRule)
}

__all__ = ["RECORDED_RULES", "RULES", "RULES_BY_CODE", "ProgramRule", "RecordedRule", "Rule"]
