#include "runtime/tools/ModelProfile.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <array>

namespace ddl::runtime {

namespace {

// Builds the parameter list in registration (forward) order; reversed at the end.
class ResNetBuilder {
public:
    void conv(const std::string& name, std::size_t in, std::size_t out, std::size_t kernel,
              std::size_t out_hw) {
        const std::size_t count = in * out * kernel * kernel;
        m_tensors.push_back({name + ".weight", count, 2.0 * static_cast<double>(count * out_hw * out_hw)});
    }
    void batch_norm(const std::string& name, std::size_t channels) {
        m_tensors.push_back({name + ".weight", channels, 0});
        m_tensors.push_back({name + ".bias", channels, 0});
    }
    void linear(const std::string& name, std::size_t in, std::size_t out) {
        m_tensors.push_back({name + ".weight", in * out, 2.0 * static_cast<double>(in * out)});
        m_tensors.push_back({name + ".bias", out, 0});
    }
    std::vector<TensorSpec> backprop_order() && {
        std::reverse(m_tensors.begin(), m_tensors.end());
        return std::move(m_tensors);
    }

private:
    std::vector<TensorSpec> m_tensors;
};

// torchvision's resnet.py with Bottleneck blocks (expansion 4) on a 224x224 input.
std::vector<TensorSpec> resnet_bottleneck(const std::array<int, 4>& blocks) {
    ResNetBuilder b;
    b.conv("conv1", 3, 64, 7, 112);
    b.batch_norm("bn1", 64);
    std::size_t in = 64;
    std::size_t hw = 56; // after the stem's max-pool
    for (std::size_t layer = 0; layer < 4; ++layer) {
        const std::size_t width = std::size_t{64} << layer;
        const std::size_t out = width * 4;
        for (int block = 0; block < blocks[layer]; ++block) {
            const std::string p = "layer" + std::to_string(layer + 1) + "." + std::to_string(block) + ".";
            const bool strided = block == 0 && layer > 0;
            const std::size_t out_hw = strided ? hw / 2 : hw;
            b.conv(p + "conv1", in, width, 1, hw); // v1.5: the 1x1 conv keeps the input resolution
            b.batch_norm(p + "bn1", width);
            b.conv(p + "conv2", width, width, 3, out_hw);
            b.batch_norm(p + "bn2", width);
            b.conv(p + "conv3", width, out, 1, out_hw);
            b.batch_norm(p + "bn3", out);
            if (block == 0) {
                b.conv(p + "downsample.0", in, out, 1, out_hw);
                b.batch_norm(p + "downsample.1", out);
            }
            in = out;
            hw = out_hw;
        }
    }
    b.linear("fc", 2048, 1000);
    return std::move(b).backprop_order();
}

} // namespace

std::size_t ModelProfile::params() const {
    std::size_t total = 0;
    for (const auto& t : tensors)
        total += t.count;
    return total;
}

double ModelProfile::forward_flops() const {
    double total = 0;
    for (const auto& t : tensors)
        total += t.forward_flops;
    return total;
}

Result<ModelProfile> make_model_profile(std::string_view spec) {
    if (spec == "resnet50") return ModelProfile{"resnet50", resnet_bottleneck({3, 4, 6, 3})};
    if (spec == "resnet101") return ModelProfile{"resnet101", resnet_bottleneck({3, 4, 23, 3})};
    constexpr std::string_view k_custom = "custom:";
    if (starts_with(spec, k_custom)) {
        ModelProfile profile{"custom", {}};
        // Compute as dense as ResNet-50's per parameter, so a custom layout still overlaps realistically.
        const ModelProfile reference{"resnet50", resnet_bottleneck({3, 4, 6, 3})};
        const double flops_per_param = reference.forward_flops() / static_cast<double>(reference.params());
        for (const auto& item : split(spec.substr(k_custom.size()), ',')) {
            const auto count = parse_int(trim(item));
            if (!count || *count <= 0)
                return Error{"custom profile: '" + item + "' is not a positive element count"};
            profile.tensors.push_back({"tensor" + std::to_string(profile.tensors.size()),
                                       static_cast<std::size_t>(*count),
                                       flops_per_param * static_cast<double>(*count)});
        }
        if (profile.tensors.empty()) return Error{"custom profile: no element counts after 'custom:'"};
        return profile;
    }
    return Error{"unknown profile '" + std::string(spec) + "' (resnet50, resnet101 or custom:N1,N2,...)"};
}

} // namespace ddl::runtime
