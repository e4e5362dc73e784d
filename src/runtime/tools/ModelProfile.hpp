#pragma once
// ModelProfile: the gradient layout of a real network, for ddl-train-bench. A data-parallel step's
// communication is shaped by how many tensors backprop hands over, how large each is and in which
// order they become ready, so the profiles list every parameter tensor of the real architecture.
//
// Profiles (spec strings):
//   resnet50, resnet101  torchvision ResNet-50/101 (v1.5: stride on the 3x3 conv): conv weights (no
//                        bias), BatchNorm weight + bias, fc weight + bias. 161 / 314 tensors,
//                        25,557,032 / 44,549,160 parameters.
//   custom:N1,N2,...     explicit element counts, in backprop order; each tensor's layer gets
//                        ResNet-50's forward FLOPs per parameter.
//
// Order: the reverse of the parameter registration order (fc.bias first, conv1.weight last), which
// is the order backprop produces gradients in and the order PyTorch DDP buckets them in.
#include "util/Result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ddl::runtime {

struct TensorSpec {
    std::string name;     // torchvision's parameter name, e.g. "layer3.2.conv2.weight"
    std::size_t count;    // fp32 elements
    double forward_flops; // FLOPs (2 per multiply-add) of the layer this tensor belongs to, per sample
                          // (224x224 input); counted once per layer, on its weight tensor
};

struct ModelProfile {
    std::string name;
    std::vector<TensorSpec> tensors; // backprop order

    [[nodiscard]] std::size_t params() const;
    [[nodiscard]] std::size_t bytes() const { return params() * sizeof(float); }
    // Forward FLOPs of conv and fc layers per sample (BatchNorm, ReLU and pooling are not counted).
    [[nodiscard]] double forward_flops() const;
};

// "resnet50", "resnet101" or "custom:N1,N2,..."; an unknown name or a bad count is an Error.
[[nodiscard]] Result<ModelProfile> make_model_profile(std::string_view spec);

} // namespace ddl::runtime
