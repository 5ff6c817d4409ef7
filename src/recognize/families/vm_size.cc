// The RAM a local VM was configured with: WSL2, minikube, colima, Podman
// machine, multipass, docker-machine and Docker Desktop run Linux in a VM
// whose memory is a setting, and a global OOM inside it is that setting
// reached. The size as the user gave it (runtime_setting, detail "VM memory
// (<tool>)", limit in bytes), context only:
//
//   [wsl2]                       .wslconfig (a "memory=" line under the [wsl2] section; GB / MB)
//   memory=4GB
//   $ minikube start --memory=4096          (MB without a unit; also 4g, 4096mb)
//   $ colima start --cpu 4 --memory 4       (GiB without a unit)
//   $ podman machine init --memory 2048     (MiB without a unit)
//   $ multipass launch --memory 4G          (also --mem, -m)
//   $ docker-machine create -d virtualbox --virtualbox-memory 2048   (MB)
//   "memoryMiB": 2048,                      (Docker Desktop's settings.json)
//
// The diagnosis weighs it against the killed process: a victim holding most
// of the VM's configured memory says the VM is smaller than the work.
#include <string>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"[wsl2]", kContext},
    {"^[ \t]*memory\\s*=\\s*[0-9]", kRegex | kContext},
    {"(minikube start|colima start|podman machine init|podman machine set|multipass launch) .*(--memory|--mem|-m)[ =][0-9]",
     kRegex | kContext},
    {"--virtualbox-memory[ =][0-9]", kRegex | kContext},
    {"\"memoryMiB\": ?[0-9]", kRegex | kContext},
};

// A size with the unit the tool assumes when none is given ("4096", "8g",
// "4GB": binary, as these tools read them); none for 0.
std::optional<uint64_t> size_with_default(std::string_view v, uint64_t unit) {
  auto bytes = platform::parse_binary_size(v, unit);
  return bytes && *bytes > 0 ? bytes : std::nullopt;
}

class VmSize final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    std::string_view t = text::trim(s);
    if (text::contains(t, "[wsl2]")) {
      wsl_line_ = line.number;
      return;
    }
    if (text::starts_with(t, "memory")) {
      if (!wsl_line_ || line.number > wsl_line_ + 20) return;
      auto eq = text::after(t, "=");
      if (!eq) return;
      return emit(line, "WSL2 .wslconfig", size_with_default(text::trim_left(*eq), units::MiB), out);
    }
    if (auto v = text::after(s, "\"memoryMiB\":")) return emit(line, "Docker Desktop", size_with_default(text::trim_left(*v), units::MiB), out);
    if (auto v = text::after(s, "--virtualbox-memory")) return emit(line, "docker-machine", size_with_default(text::trim_left(skip_eq(*v)), units::MiB), out);
    struct Tool {
      std::string_view command, name;
      uint64_t unit;
    };
    static constexpr Tool kTools[] = {{"minikube start", "minikube", units::MiB},
                                      {"colima start", "colima", units::GiB},
                                      {"podman machine init", "podman machine", units::MiB},
                                      {"podman machine set", "podman machine", units::MiB},
                                      {"multipass launch", "multipass", units::MiB}};
    for (const Tool& tool : kTools) {
      auto v = text::after(s, tool.command);
      if (!v) continue;
      for (std::string_view flag : {" --memory", " --mem", " -m"}) {
        size_t p = v->find(flag);
        if (p == std::string_view::npos) continue;
        std::string_view after = v->substr(p + flag.size());
        if (after.empty() || (after[0] != ' ' && after[0] != '=')) continue;
        return emit(line, tool.name, size_with_default(text::trim_left(skip_eq(after)), tool.unit), out);
      }
      return;
    }
  }

 private:
  uint64_t wsl_line_ = 0;
  bool said_ = false;

  static std::string_view skip_eq(std::string_view v) {
    v = text::trim_left(v);
    return text::starts_with(v, "=") ? v.substr(1) : v;
  }

  void emit(const Line& line, std::string_view tool, std::optional<uint64_t> bytes, FactSink& out) {
    if (!bytes || said_) return;
    said_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::runtime);
    f.limit = bytes;
    f.detail = fmt::format("VM memory ({})", tool);
    out.add(std::move(f));
  }
};

}  // namespace

const RecognizerEntry kVmSizeEntry{"vm_size", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new VmSize); }};

}  // namespace aimem
