// A 32-bit process: its address space (2 GiB of user space on 32-bit
// Windows, 3 to 4 GiB elsewhere) runs out long before the machine's RAM, so
// a host allocation that failed in it failed at that ceiling (the diagnosis
// reads it as the limit: limit_too_low). The marks, as each program prints
// them about itself or its machine:
//   Python 2.7.11 (v2.7.11:6d1b6a68f775, Dec  5 2015, 20:32:19) [MSC v.1500 32 bit (Intel)]   CPython's banner
//   Java HotSpot(TM) Client VM (build 25.131-b11, mixed mode) / OpenJDK 32-Bit Server VM     java -version
//   System Type:               X86-based PC                        Windows' systeminfo
//   ..._x86-32_windows_...                                           a build's platform name (OpenJ9's test jobs)
//   host: i686-pc-windows-gnu / [i686-linux] / i686-w64-mingw32      a toolchain's or interpreter's target triple
//   go version go1.21.4 windows/386 / GOARCH=386                     Go's 386 port
//   R version 3.6.1 (2019-07-05) -- "Action of the Toes" ... Platform: i386-w64-mingw32/i386 (32-bit)
// One context fact (runtime_setting, detail kThirtyTwoBit) per input.
#include <array>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr std::string_view kMarks[] = {
    " 32 bit (Intel)]", " 32 bit (ARM)]", "32-Bit Server VM", "32-Bit Client VM", "X86-based PC", "x86-32_", "_x86-32",
    "i686-pc-windows", "i686-linux", "i686-w64-mingw32", "i386-w64-mingw32", "windows/386", "linux/386", "GOARCH=386", "(32-bit)",
};

// The marks are the patterns too (literals, context only).
constexpr auto kPatterns = [] {
  std::array<Pattern, std::size(kMarks)> p{};
  for (size_t i = 0; i < std::size(kMarks); ++i) p[i] = {kMarks[i].data(), kContext};
  return p;
}();

class AddressSpace final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (said_) return;
    std::string_view s = line.text;
    for (std::string_view m : kMarks) {
      if (!text::contains(s, m)) continue;
      said_ = true;
      Fact f = make_fact(line, FactKind::runtime_setting, Family::runtime);
      f.detail = std::string(kThirtyTwoBit);
      f.strength = 0.6f;
      out.add(std::move(f));
      return;
    }
  }

 private:
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kAddressSpaceEntry{"address_space", Family::runtime, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new AddressSpace); }};

}  // namespace aimem
