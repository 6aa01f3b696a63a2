"""The architectures of the model corpus: small `transformers` and `torchvision`
configurations (2 layers, hidden 64-128, sequence 16-32, images 32-64 px) and a DLRM.

Each `Arch` builds its module (random weights; the caller fixes the seed) and example
inputs. Transformers' inputs get a symbolic batch dim when exported; `kinds` names the
features a model covers (the CI sample takes one model of each kind).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

SEQ = 16
BATCH = 2
VOCAB = 128


@dataclass(frozen=True)
class Arch:
    name: str
    kinds: tuple[str, ...]
    build: Callable[[], nn.Module]
    inputs: Callable[[], dict[str, torch.Tensor]]
    symbolic_batch: bool = True  # transformers: batch dim 0 of every input is symbolic
    keywords: bool = True  # a transformers model: called with keyword inputs, its first output kept

    def module(self) -> nn.Module:
        module = self.build()
        return FirstOutput(module, tuple(self.inputs())) if self.keywords else module


def _ids(seq: int = SEQ, vocab: int = VOCAB) -> torch.Tensor:
    return torch.randint(0, vocab, (BATCH, seq), generator=torch.Generator().manual_seed(1))


def _mask(seq: int = SEQ) -> torch.Tensor:
    mask = torch.ones(BATCH, seq, dtype=torch.int64)
    mask[1, seq - 3:] = 0  # the second sequence is padded
    return mask


def _image(size: int, channels: int = 3) -> torch.Tensor:
    return torch.randn(BATCH, channels, size, size, generator=torch.Generator().manual_seed(2))


class FirstOutput(nn.Module):
    """A transformers model called with keyword inputs, returning its first output
    (the last hidden state or the logits) as a plain tensor."""

    def __init__(self, model: nn.Module, names: tuple[str, ...]):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.model(**dict(zip(self.names, args)), return_dict=False)
        return out[0]


def _hf(model_cls: str, config_cls: str, **config) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import transformers

        cfg = getattr(transformers, config_cls)(**config)
        return getattr(transformers, model_cls)(cfg)
    return build


def _text(**extra) -> dict:
    """The common small text-transformer sizes."""
    return dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=128, max_position_embeddings=64, **extra)


def _encoder_inputs() -> dict[str, torch.Tensor]:
    return {"input_ids": _ids(), "attention_mask": _mask()}


def _decoder_inputs() -> dict[str, torch.Tensor]:
    return {"input_ids": _ids(), "attention_mask": _mask()}


def _seq2seq_inputs() -> dict[str, torch.Tensor]:
    return {"input_ids": _ids(), "attention_mask": _mask(), "decoder_input_ids": _ids(8)}


def _causal(model_cls: str, config_cls: str, **config) -> Callable[[], nn.Module]:
    return _hf(model_cls, config_cls, use_cache=False, **config)


def _vision(size: int) -> Callable[[], dict[str, torch.Tensor]]:
    return lambda: {"pixel_values": _image(size)}


TRANSFORMERS: list[Arch] = [
    # encoders
    Arch("bert", ("encoder",), _hf("BertModel", "BertConfig", **_text()), _encoder_inputs),
    Arch("roberta", ("encoder",), _hf("RobertaModel", "RobertaConfig", **_text()), _encoder_inputs),
    Arch("distilbert", ("encoder",),
         _hf("DistilBertModel", "DistilBertConfig", vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4,
             hidden_dim=128, max_position_embeddings=64), _encoder_inputs),
    Arch("deberta_v2", ("encoder", "relative-position"),
         _hf("DebertaV2Model", "DebertaV2Config", **_text(relative_attention=True, position_buckets=16,
                                                           max_relative_positions=32)), _encoder_inputs),
    Arch("albert", ("encoder",), _hf("AlbertModel", "AlbertConfig", embedding_size=32, **_text()), _encoder_inputs),
    Arch("electra", ("encoder",), _hf("ElectraModel", "ElectraConfig", embedding_size=32, **_text()),
         _encoder_inputs),
    # causal decoders
    Arch("gpt2", ("decoder",),
         _causal("GPT2LMHeadModel", "GPT2Config", vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4,
                 n_positions=64), _decoder_inputs),
    Arch("gpt_neox", ("decoder", "rotary"),
         _causal("GPTNeoXForCausalLM", "GPTNeoXConfig", **_text(rotary_pct=0.5)), _decoder_inputs),
    Arch("llama", ("decoder", "rotary", "rmsnorm", "gqa"),
         _causal("LlamaForCausalLM", "LlamaConfig", **_text(num_key_value_heads=2)), _decoder_inputs),
    Arch("mistral", ("decoder", "rotary", "rmsnorm", "gqa"),
         _causal("MistralForCausalLM", "MistralConfig", **_text(num_key_value_heads=1, head_dim=16)),
         _decoder_inputs),
    Arch("qwen2", ("decoder", "rotary", "rmsnorm", "gqa"),
         _causal("Qwen2ForCausalLM", "Qwen2Config", **_text(num_key_value_heads=2)), _decoder_inputs),
    Arch("gemma", ("decoder", "rotary", "rmsnorm"),
         _causal("GemmaForCausalLM", "GemmaConfig", head_dim=16, **_text(num_key_value_heads=4)),
         _decoder_inputs),
    Arch("bloom", ("decoder", "alibi"),
         _causal("BloomForCausalLM", "BloomConfig", vocab_size=VOCAB, hidden_size=64, n_layer=2, n_head=4),
         _decoder_inputs),
    Arch("falcon_alibi", ("decoder", "alibi"),
         _causal("FalconForCausalLM", "FalconConfig", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                 num_attention_heads=4, alibi=True, new_decoder_architecture=False, multi_query=True),
         _decoder_inputs),
    Arch("opt", ("decoder",),
         _causal("OPTForCausalLM", "OPTConfig", vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                 num_attention_heads=4, ffn_dim=128, word_embed_proj_dim=64, max_position_embeddings=64),
         _decoder_inputs),
    # encoder-decoders
    Arch("t5", ("encoder-decoder", "rmsnorm", "relative-position"),
         _causal("T5ForConditionalGeneration", "T5Config", vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128,
                 num_layers=2, num_heads=4, decoder_start_token_id=0), _seq2seq_inputs),
    Arch("bart", ("encoder-decoder",),
         _causal("BartForConditionalGeneration", "BartConfig", vocab_size=VOCAB, d_model=64, encoder_layers=1,
                 decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                 decoder_ffn_dim=128, max_position_embeddings=64), _seq2seq_inputs),
    # vision transformers and hybrids
    Arch("vit", ("vision-transformer",),
         _hf("ViTModel", "ViTConfig", image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
             num_attention_heads=4, intermediate_size=128), _vision(32)),
    Arch("clip_vision", ("vision-transformer",),
         _hf("CLIPVisionModel", "CLIPVisionConfig", image_size=32, patch_size=8, hidden_size=64,
             num_hidden_layers=2, num_attention_heads=4, intermediate_size=128), _vision(32)),
    Arch("swin", ("windowed-attention",),
         _hf("SwinModel", "SwinConfig", image_size=32, patch_size=2, embed_dim=32, depths=[1, 1],
             num_heads=[2, 4], window_size=4, mlp_ratio=2.0), _vision(32)),
    Arch("mobilevit", ("hybrid-conv-attention",),
         _hf("MobileViTModel", "MobileViTConfig", image_size=64, hidden_sizes=[32, 48, 64],
             neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2, expand_ratio=2.0),
         _vision(64)),
    Arch("convnext", ("cnn", "depthwise"),
         _hf("ConvNextModel", "ConvNextConfig", num_stages=2, hidden_sizes=[32, 64], depths=[1, 1], image_size=32),
         _vision(32)),
    # audio
    Arch("whisper_encoder", ("conv-front-end",), lambda: _whisper_encoder(),
         lambda: {"input_features": torch.randn(BATCH, 16, 32, generator=torch.Generator().manual_seed(3))}),
    Arch("wav2vec2", ("conv-front-end",),
         _hf("Wav2Vec2Model", "Wav2Vec2Config", hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=128, conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3),
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, do_stable_layer_norm=True),
         lambda: {"input_values": torch.randn(BATCH, 400, generator=torch.Generator().manual_seed(4))}),
]


def _whisper_encoder() -> nn.Module:
    import transformers

    cfg = transformers.WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=64, encoder_layers=2,
                                     decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
                                     encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=16,
                                     max_target_positions=16, pad_token_id=0, bos_token_id=1,
                                     eos_token_id=2, decoder_start_token_id=1)
    return transformers.WhisperModel(cfg).get_encoder()


def _tv(builder: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    return builder


def _efficientnet() -> nn.Module:
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return EfficientNet(setting, 0.2, last_channel=last, num_classes=10)


def _regnet() -> nn.Module:
    from torchvision.models.regnet import BlockParams, RegNet

    params = BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8)
    return RegNet(params, num_classes=10)


def _shufflenet() -> nn.Module:
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    return ShuffleNetV2([1, 1, 1], [16, 32, 64, 128, 256], num_classes=10)


def _densenet() -> nn.Module:
    from torchvision.models.densenet import DenseNet

    return DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2, num_classes=10)


def _resnext() -> nn.Module:
    from torchvision.models.resnet import Bottleneck, ResNet

    class Small(ResNet):
        """torchvision's ResNet, two grouped-bottleneck stages of 32 and 64 channels."""

        def __init__(self) -> None:
            super().__init__(Bottleneck, [1, 1, 1, 1], num_classes=10, groups=4, width_per_group=4)
            self.base_width = 64  # the bottlenecks' widths: planes x groups
            self.inplanes = 16
            self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.layer1 = self._make_layer(Bottleneck, 8, 1)
            self.layer2 = self._make_layer(Bottleneck, 16, 1, stride=2)
            self.layer3 = nn.Identity()
            self.layer4 = nn.Identity()
            self.fc = nn.Linear(64, 10)
    return Small()


def _mobilenet_v3() -> nn.Module:
    from torchvision.models import mobilenet_v3_small

    return mobilenet_v3_small(width_mult=0.25, num_classes=10)


def _mobilenet_v2() -> nn.Module:
    from torchvision.models import mobilenet_v2

    return mobilenet_v2(width_mult=0.25, num_classes=10)


def _mnasnet() -> nn.Module:
    from torchvision.models import MNASNet

    return MNASNet(0.25, num_classes=10)


def _squeezenet() -> nn.Module:
    from torchvision.models import squeezenet1_1

    return squeezenet1_1(num_classes=10)


def _cnn(name: str, kinds: tuple[str, ...], build: Callable[[], nn.Module]) -> Arch:
    return Arch(name, kinds, build, _vision(32), symbolic_batch=False, keywords=False)


TORCHVISION: list[Arch] = [
    Arch("resnet", ("cnn",), _hf("ResNetModel", "ResNetConfig", embedding_size=16, hidden_sizes=[16, 32],
                                 depths=[1, 1], layer_type="basic"), _vision(32), symbolic_batch=False),
    _cnn("resnext", ("cnn", "grouped"), _resnext),
    _cnn("mobilenet_v3", ("cnn", "depthwise", "squeeze-excite"), _mobilenet_v3),
    _cnn("mobilenet_v2", ("cnn", "depthwise"), _mobilenet_v2),
    _cnn("efficientnet", ("cnn", "depthwise", "squeeze-excite"), _efficientnet),
    _cnn("regnet", ("cnn", "grouped", "squeeze-excite"), _regnet),
    _cnn("shufflenet", ("cnn", "depthwise"), _shufflenet),
    _cnn("densenet", ("cnn",), _densenet),
    _cnn("mnasnet", ("cnn", "depthwise"), _mnasnet),
    _cnn("squeezenet", ("cnn",), _squeezenet),
]


class DLRM(nn.Module):
    """A DLRM: a bottom MLP over dense features, `nn.EmbeddingBag` tables (sum with
    per-sample weights, and mean), a pairwise dot interaction of the feature vectors
    and a top MLP."""

    def __init__(self, dense: int = 8, dim: int = 16, rows: tuple[int, ...] = (64, 48, 32)):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, 32), nn.ReLU(), nn.Linear(32, dim), nn.ReLU())
        self.weighted = nn.EmbeddingBag(rows[0], dim, mode="sum")
        self.summed = nn.EmbeddingBag(rows[1], dim, mode="sum")
        self.mean = nn.EmbeddingBag(rows[2], dim, mode="mean")
        pairs = 4 * 3 // 2
        self.top = nn.Sequential(nn.Linear(dim + pairs, 32), nn.ReLU(), nn.Linear(32, 1))
        rows_i, cols_i = torch.tril_indices(4, 4, offset=-1)
        self.register_buffer("rows_i", rows_i)
        self.register_buffer("cols_i", cols_i)

    def forward(self, dense: torch.Tensor, idx0: torch.Tensor, w0: torch.Tensor, idx1: torch.Tensor,
                idx2: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        feats = torch.stack([x, self.weighted(idx0, per_sample_weights=w0), self.summed(idx1),
                             self.mean(idx2)], dim=1)
        inter = torch.bmm(feats, feats.transpose(1, 2))[:, self.rows_i, self.cols_i]
        return torch.sigmoid(self.top(torch.cat([x, inter], dim=1)))


def _dlrm_inputs() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    return {"dense": torch.randn(BATCH, 8, generator=g),
            "idx0": torch.randint(0, 64, (BATCH, 4), generator=g),
            "w0": torch.rand(BATCH, 4, generator=g),
            "idx1": torch.randint(0, 48, (BATCH, 3), generator=g),
            "idx2": torch.randint(0, 32, (BATCH, 5), generator=g)}


OTHER: list[Arch] = [
    Arch("dlrm", ("recommender", "embedding-bag"), DLRM, _dlrm_inputs, symbolic_batch=False, keywords=False),
]

ARCHS: list[Arch] = [*TRANSFORMERS, *TORCHVISION, *OTHER]
