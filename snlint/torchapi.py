"""What snlint knows about torch's public names, without importing torch.

Layer kinds decide every rule: which layers need SN (conv, linear), which must never get
it (normalization layers, weightless modules), which normalize with batch statistics.
"""

from __future__ import annotations

import re

SN_HOOK = "hook"  # torch.nn.utils.spectral_norm: forward pre-hook, weight_orig/_u/_v
SN_PARAM = "parametrization"  # torch.nn.utils.parametrizations.spectral_norm
SN_CUSTOM = "custom"  # a hand-written SN wrapper or mixin in the project

SN_FUNCTIONS = {
    "torch.nn.utils.spectral_norm": SN_HOOK,
    "torch.nn.utils.spectral_norm.spectral_norm": SN_HOOK,
    "torch.nn.utils.parametrizations.spectral_norm": SN_PARAM,
    "torch.nn.utils.parametrizations.spectral_norm.spectral_norm": SN_PARAM,
}

# The hook API's remover: it raises ValueError on a layer moved to the parametrization,
# which `parametrize.remove_parametrizations` removes instead.
SN_HOOK_REMOVERS = frozenset({
    "torch.nn.utils.remove_spectral_norm",
    "torch.nn.utils.spectral_norm.remove_spectral_norm",
})

# Weight normalization: another reparametrization of the weight, which a layer may use
# instead of SN on purpose.
WN_FUNCTIONS = {
    "torch.nn.utils.weight_norm": SN_HOOK,
    "torch.nn.utils.weight_norm.weight_norm": SN_HOOK,
    "torch.nn.utils.parametrizations.weight_norm": SN_PARAM,
}



def weight_norm_api(qualified: str) -> str:
    """"hook" / "parametrization" when `qualified` names torch's weight_norm, else ""."""
    return WN_FUNCTIONS.get(qualified, "")


PARTIAL = frozenset({"functools.partial"})

KINDS: dict[str, str] = {}


def _add(kind: str, names: str) -> None:
    for name in names.split():
        KINDS[name] = kind


_add("conv", "Conv1d Conv2d Conv3d LazyConv1d LazyConv2d LazyConv3d")
_add("conv_transpose", "ConvTranspose1d ConvTranspose2d ConvTranspose3d "
     "LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d")
_add("linear", "Linear LazyLinear Bilinear")
_add("batch_norm", "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d "
     "LazyBatchNorm3d SyncBatchNorm")
_add("sample_norm", "LayerNorm GroupNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d "
     "LazyInstanceNorm1d LazyInstanceNorm2d LazyInstanceNorm3d RMSNorm LocalResponseNorm")
_add("activation", "ReLU ReLU6 LeakyReLU PReLU RReLU ELU CELU SELU GELU SiLU Mish Tanh "
     "Sigmoid Hardtanh Hardswish Hardsigmoid Softplus Softsign Softshrink Hardshrink "
     "Tanhshrink LogSigmoid Softmax Softmax2d LogSoftmax Softmin GLU Threshold")
_add("pooling", "MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d "
     "AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d "
     "LPPool1d LPPool2d LPPool3d FractionalMaxPool2d FractionalMaxPool3d")
_add("dropout", "Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout")
_add("identity", "Identity Flatten Unflatten")
_add("upsample", "Upsample UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle PixelUnshuffle")
_add("padding", "ZeroPad1d ZeroPad2d ZeroPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d "
     "ReplicationPad1d ReplicationPad2d ReplicationPad3d ConstantPad1d ConstantPad2d ConstantPad3d "
     "CircularPad1d CircularPad2d CircularPad3d")
_add("container", "Sequential ModuleList ModuleDict")
_add("attention", "MultiheadAttention")
_add("embedding", "Embedding EmbeddingBag")
_add("module", "Module")
# Called on a discriminator's scores: what they return carries where the scores came from
# (the calls a `loss.backward()` differentiates).
_add("loss", "L1Loss MSELoss BCELoss BCEWithLogitsLoss CrossEntropyLoss NLLLoss SmoothL1Loss "
     "HuberLoss KLDivLoss SoftMarginLoss MarginRankingLoss HingeEmbeddingLoss CosineEmbeddingLoss "
     "MultiLabelSoftMarginLoss")

NEEDS_SN = frozenset({"conv", "conv_transpose", "linear"})
NORMALIZATION = frozenset({"batch_norm", "sample_norm"})
# Modules with no weight matrix for SN to normalize (SN102).
WEIGHTLESS = frozenset({"activation", "pooling", "dropout", "identity", "upsample", "padding",
                        "container", "attention", "loss"})

_TORCH_NN = re.compile(r"^torch\.nn(?:\.modules(?:\.\w+)?)?\.(\w+)$")


def layer_type(qual: str) -> str | None:
    """`torch.nn.Conv2d` / `torch.nn.modules.conv.Conv2d` -> `Conv2d`, else None."""
    match = _TORCH_NN.match(qual)
    if match and match.group(1) in KINDS:
        return match.group(1)
    return None


def default_sn_dim(type_name: str) -> int:
    return 1 if KINDS.get(type_name) == "conv_transpose" else 0


INIT_FUNCTION = re.compile(r"^torch\.nn\.init\.\w+_$")
INPLACE_TENSOR_INIT = frozenset({
    "normal_", "uniform_", "fill_", "zero_", "copy_", "xavier_uniform_", "xavier_normal_",
    "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "constant_", "mul_", "div_",
    "clamp_", "add_", "sub_", "trunc_normal_", "set_",
})


# torch's private base classes, as `isinstance` filters name them (`nn.modules.conv._ConvNd`).
ABSTRACT_BASES: dict[str, frozenset[str]] = {
    "conv": frozenset({"_ConvNd"}),
    "conv_transpose": frozenset({"_ConvNd", "_ConvTransposeNd", "_ConvTransposeMixin"}),
    "batch_norm": frozenset({"_BatchNorm", "_NormBase"}),
}


def type_names(short_type: str) -> frozenset[str]:
    """Every class name `isinstance` would match for a torch layer type."""
    kind = KINDS.get(short_type, "")
    names = {short_type, "Module"} | ABSTRACT_BASES.get(kind, frozenset())
    if short_type.startswith("InstanceNorm") or short_type.startswith("LazyInstanceNorm"):
        names |= {"_InstanceNorm", "_NormBase"}
    return frozenset(names)


# What a state dict holds for a spectrally normalized `weight`, per API (fix messages:
# moving SN between APIs or off a layer renames these keys).
KEYS_HOOK = "`weight_orig`, `weight_u`, `weight_v`"
KEYS_PARAM = ("`parametrizations.weight.original`, `parametrizations.weight.0._u`, "
              "`parametrizations.weight.0._v`")
