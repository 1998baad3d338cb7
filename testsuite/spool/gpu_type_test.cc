// GPU type names: normalisation of device names, validity, and the match
// of a Slurm GRES type against a reported name (pollux/gpu_type.h).
#include <gtest/gtest.h>

#include <string>

#include "pollux/gpu_type.h"

namespace pollux {
namespace {

TEST(NormalizeGpuType, CudaDeviceNames) {
  EXPECT_EQ(normalize_gpu_type("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(normalize_gpu_type("Tesla V100-SXM2-16GB"), "tesla_v100-sxm2-16gb");
  EXPECT_EQ(normalize_gpu_type("NVIDIA A100-SXM4-80GB"), "nvidia_a100-sxm4-80gb");
  EXPECT_EQ(normalize_gpu_type("NVIDIA GeForce RTX 3090"), "nvidia_geforce_rtx_3090");
}

TEST(NormalizeGpuType, RunsBecomeOneUnderscoreTrimmed) {
  EXPECT_EQ(normalize_gpu_type("  A100 /\t(80GB)  "), "a100_80gb");
  EXPECT_EQ(normalize_gpu_type("a__b"), "a_b");
  EXPECT_EQ(normalize_gpu_type("h100"), "h100");
  EXPECT_EQ(normalize_gpu_type("gh200.v2"), "gh200.v2");
  EXPECT_EQ(normalize_gpu_type("\xc3\xa9t\xc3\xa9"), "t");  // bytes outside ASCII are separators
}

TEST(NormalizeGpuType, NothingLeftIsUnknown) {
  EXPECT_EQ(normalize_gpu_type(""), "");
  EXPECT_EQ(normalize_gpu_type(" _ !"), "");
}

TEST(NormalizeGpuType, CutToTheLimitAndAlwaysValid) {
  const std::string cut = normalize_gpu_type(std::string(63, 'a') + " b" + std::string(10, 'c'));
  EXPECT_EQ(cut, std::string(63, 'a'));  // the '_' at the cut is trimmed
  for (const char* text : {"NVIDIA H100 80GB HBM3", "x", "1080 Ti", "-a-", ".5"})
    EXPECT_TRUE(valid_gpu_type(normalize_gpu_type(text))) << text;
}

TEST(ValidGpuType, TheCharacterSetAndLength) {
  EXPECT_TRUE(valid_gpu_type("a100"));
  EXPECT_TRUE(valid_gpu_type("tesla_v100-sxm2-16gb"));
  EXPECT_TRUE(valid_gpu_type(std::string(kGpuTypeMaxLen, 'z')));
  EXPECT_FALSE(valid_gpu_type(""));
  EXPECT_FALSE(valid_gpu_type(std::string(kGpuTypeMaxLen + 1, 'z')));
  EXPECT_FALSE(valid_gpu_type("A100"));
  EXPECT_FALSE(valid_gpu_type("a100 80gb"));
  EXPECT_FALSE(valid_gpu_type("a100:2"));
}

TEST(GpuTypeMatches, WholeTokensOfTheReportedName) {
  EXPECT_TRUE(gpu_type_matches("h100", "h100"));
  EXPECT_TRUE(gpu_type_matches("h100", "nvidia_h100_80gb_hbm3"));
  EXPECT_TRUE(gpu_type_matches("H100", "nvidia_h100_80gb_hbm3"));  // Slurm's names are normalised
  EXPECT_TRUE(gpu_type_matches("a100", "nvidia_a100-sxm4-80gb"));
  EXPECT_TRUE(gpu_type_matches("a100-sxm4", "nvidia_a100-sxm4-80gb"));
  EXPECT_TRUE(gpu_type_matches("nvidia_h100_80gb_hbm3", "nvidia_h100_80gb_hbm3"));
  EXPECT_FALSE(gpu_type_matches("a10", "nvidia_a100-sxm4-80gb"));
  EXPECT_FALSE(gpu_type_matches("100", "nvidia_a100"));
  EXPECT_FALSE(gpu_type_matches("h100", "a100"));
  EXPECT_FALSE(gpu_type_matches("", "a100"));
  EXPECT_FALSE(gpu_type_matches("a100", ""));
}

}  // namespace
}  // namespace pollux
