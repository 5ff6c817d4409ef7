// fit reads nothing itself: model files come through a core/file_system.h
// view and this machine's memory as a MachineReading. These tests hand in
// both from memory (no file is written, no /proc read) and pin what
// `aimem fit` makes of them.
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fit/gguf.h"
#include "fit/hf.h"
#include "fit/inputs.h"
#include "fit/runtime.h"

namespace aimem::fit {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Files and folders in memory. A folder is a path with entries under it;
// `fail_reads_at` makes every read at or past that offset fail with EIO.
class MemoryFiles final : public FileSystem {
 public:
  std::map<std::string, std::string> files;
  std::map<std::string, FileKind> special;  // a FIFO, a device: FileKind::other
  uint64_t fail_reads_at = ~0ull;

  FileKind kind(const std::string& path) const override {
    if (auto it = special.find(path); it != special.end()) return it->second;
    if (files.count(path)) return FileKind::regular;
    for (const auto& [p, _] : files)
      if (p.rfind(path + "/", 0) == 0) return FileKind::directory;
    return FileKind::missing;
  }
  std::vector<std::string> list(const std::string& dir) const override {
    std::vector<std::string> names;
    for (const auto& [p, _] : files)
      if (p.rfind(dir + "/", 0) == 0 && p.find('/', dir.size() + 1) == std::string::npos)
        names.push_back(p.substr(dir.size() + 1));
    return names;
  }
  Result<std::string> read(const std::string& path, size_t max_bytes, const std::string& what,
                           bool) const override {
    auto it = files.find(path);
    if (it == files.end()) return make_error(path + ": cannot read the " + what + ": No such file or directory");
    if (it->second.size() > max_bytes) return make_error(path + ": too large");
    return it->second;
  }
  Result<std::unique_ptr<RandomAccessFile>> open(const std::string& path) const override {
    FileKind k = kind(path);
    if (k == FileKind::missing) return make_error(path + ": cannot open: No such file or directory");
    const std::string* bytes = k == FileKind::regular ? &files.at(path) : &empty_;
    return std::unique_ptr<RandomAccessFile>(new File(*bytes, k, fail_reads_at));
  }

 private:
  class File final : public RandomAccessFile {
   public:
    File(const std::string& b, FileKind k, uint64_t fail_at) : b_(b), k_(k), fail_at_(fail_at) {}
    FileKind kind() const override { return k_; }
    uint64_t size() const override { return b_.size(); }
    int64_t read_at(void* dst, uint64_t n, uint64_t at) override {
      if (at + n > fail_at_) return -EIO;
      if (at >= b_.size()) return 0;
      n = std::min<uint64_t>(n, b_.size() - at);
      std::memcpy(dst, b_.data() + at, n);
      return int64_t(n);
    }

   private:
    const std::string& b_;
    FileKind k_;
    uint64_t fail_at_;
  };
  std::string empty_;
};

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

const char* kConfig = R"({"model_type":"llama","architectures":["LlamaForCausalLM"],"hidden_size":64,
  "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,
  "vocab_size":256,"max_position_embeddings":2048,"torch_dtype":"bfloat16"})";

TEST(FitInputs, AModelFolderComesFromTheFilesHandedIn) {
  MemoryFiles m;
  m.files["m/config.json"] = kConfig;
  std::string header = R"({"model.embed_tokens.weight":{"dtype":"BF16","shape":[256,64],"data_offsets":[0,32768]}})";
  m.files["m/model.safetensors"] = le64(header.size()) + header + std::string(32768, '\0');
  auto spec = load_model(m, "m", "", "");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->source, "safetensors");
  EXPECT_EQ(spec->path, "m");
  EXPECT_EQ(spec->weight_bytes, 32768u);
  EXPECT_TRUE(spec->weights_exact);
}

TEST(FitInputs, AFolderOfGgufFilesNamesOne) {
  MemoryFiles m;
  m.files["g/model-q4.gguf"] = "GGUF";
  auto spec = load_model(m, "g", "", "");
  ASSERT_FALSE(spec);
  EXPECT_TRUE(has(spec.error().message, "g: a folder of GGUF files; name the file to fit (e.g. g/model-q4.gguf)"))
      << spec.error().message;
}

TEST(FitInputs, AFifoIsRefusedBeforeItIsOpened) {
  MemoryFiles m;
  m.special["pipe"] = FileKind::other;
  auto spec = load_model(m, "pipe", "", "");
  ASSERT_FALSE(spec);
  EXPECT_TRUE(has(spec.error().message, "pipe: not a regular file")) << spec.error().message;
}

TEST(FitInputs, AReadErrorInAGgufHeaderNamesTheFileAndTheByte) {
  MemoryFiles m;
  m.files["x.gguf"] = std::string("GGUF") + std::string(4, '\0') + std::string(64, '\0');
  m.files["x.gguf"][4] = 3;  // version 3
  m.fail_reads_at = 8;
  auto g = read_gguf(m, "x.gguf");
  ASSERT_FALSE(g);
  EXPECT_TRUE(has(g.error().message, "x.gguf: read error at byte")) << g.error().message;
  EXPECT_TRUE(has(g.error().message, "Input/output error")) << g.error().message;
}

TEST(FitInputs, MissingFilesAreNamed) {
  MemoryFiles m;
  auto st = read_safetensors_header(m, "m/a.safetensors");
  ASSERT_FALSE(st);
  EXPECT_TRUE(has(st.error().message, "m/a.safetensors: cannot open")) << st.error().message;
  m.files["m/config.json"] = kConfig;
  m.files["m/model.safetensors.index.json"] = R"({"weight_map":{"w":"model-00001.safetensors"}})";
  auto spec = load_model(m, "m", "", "");
  ASSERT_FALSE(spec);
  EXPECT_TRUE(has(spec.error().message, "shard 'model-00001.safetensors' (holding 'w') is missing from m"))
      << spec.error().message;
}

// ---------------------------------------------------------------- hardware

MachineReading two_gpus() {
  MachineReading r;
  r.gpus = {{"NVIDIA H100\x1b[31m", 80 * kGiB, 2 * kGiB}, {"NVIDIA H100", 80 * kGiB, 0}};
  r.cpu_amx = true;
  r.mem_available = 200 * kGiB;
  r.cgroup_room = 64 * kGiB;
  return r;
}

TEST(FitHardware, ThisMachineIsWhatTheReadingSays) {
  HardwareArgs a;
  ASSERT_TRUE(reads_this_machine(a));
  auto hw = resolve_hardware(a, two_gpus());
  ASSERT_TRUE(hw) << hw.error().message;
  EXPECT_EQ(hw->gpu_count, 2u);
  EXPECT_EQ(hw->gpu_total, 80 * kGiB);
  EXPECT_EQ(hw->gpu_in_use, 2 * kGiB);
  EXPECT_EQ(hw->gpu_name.find('\x1b'), std::string::npos);  // the driver's text made printable
  EXPECT_EQ(hw->gpu_source, "NVML (this machine)");
  EXPECT_TRUE(hw->cpu_amx);
  // The cgroup's room is smaller than MemAvailable: it is the bound.
  EXPECT_EQ(hw->ram_total, 64 * kGiB);
  EXPECT_EQ(hw->ram_source, "this cgroup's memory limit");
}

TEST(FitHardware, GpusAndDeviceCpuNarrowTheReading) {
  HardwareArgs a;
  a.gpus = 1;
  auto one = resolve_hardware(a, two_gpus());
  ASSERT_TRUE(one);
  EXPECT_EQ(one->gpu_count, 1u);
  a.device_cpu = true;
  MachineReading r = two_gpus();
  r.cgroup_room.reset();
  auto cpu = resolve_hardware(a, r);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->gpu_count, 0u);
  EXPECT_EQ(cpu->ram_total, 200 * kGiB);
  EXPECT_EQ(cpu->ram_source, "MemAvailable (this machine)");
}

TEST(FitHardware, NamedHardwareLeavesTheMachineAlone) {
  HardwareArgs a;
  a.gpu = "L4";
  EXPECT_FALSE(reads_this_machine(a));
  auto hw = resolve_hardware(a, two_gpus());
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->gpu_name, "L4");
  EXPECT_EQ(hw->ram_total, 0u);  // unknown, not this machine's
  EXPECT_FALSE(hw->cpu_amx);
}

}  // namespace
}  // namespace aimem::fit
