#pragma once
// Element types and reduction operators of the collectives, and the float16 <-> float conversions the
// CPU backend uses to sum half buffers (summed in float, rounded back once per addition).
#include <bit>
#include <cstddef>
#include <cstdint>

namespace ddl::runtime {

enum class DataType { float32, float16 };
enum class ReduceOp { sum, average };

[[nodiscard]] constexpr std::size_t element_size(DataType type) {
    return type == DataType::float32 ? 4 : 2;
}
[[nodiscard]] constexpr const char* data_type_name(DataType type) {
    return type == DataType::float32 ? "float" : "half";
}

// IEEE 754 binary16 -> binary32 (exact).
[[nodiscard]] inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1fu;
    std::uint32_t mantissa = h & 0x3ffu;
    std::uint32_t bits = 0;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else {
            // Subnormal half: normalise it, float has the range to represent it as a normal number.
            exponent = 127 - 15 + 1;
            while ((mantissa & 0x400u) == 0) {
                mantissa <<= 1;
                --exponent;
            }
            mantissa &= 0x3ffu;
            bits = sign | (exponent << 23) | (mantissa << 13);
        }
    } else if (exponent == 31) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    }
    return std::bit_cast<float>(bits);
}

// IEEE 754 binary32 -> binary16 with round-to-nearest-even, overflow to infinity, NaN kept NaN.
[[nodiscard]] inline std::uint16_t float_to_half(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)
        return static_cast<std::uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u); // >= 65520 rounds to inf
    if (absx < 0x38800000u) {                                                   // below the smallest normal
        if (absx < 0x33000000u) return sign;                                    // rounds to zero
        const std::uint32_t exponent = absx >> 23;
        const std::uint32_t mantissa = (absx & 0x7fffffu) | 0x800000u;
        const std::uint32_t shift = 126 - exponent;
        std::uint32_t h = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = (absx >> 13) - (112u << 10);
    const std::uint32_t rest = absx & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

} // namespace ddl::runtime
