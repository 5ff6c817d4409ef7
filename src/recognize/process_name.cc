#include "recognize/process_name.h"

#include <array>

namespace aimem::process_name {
namespace {

constexpr size_t kMaxName = 64;

std::string_view first_word(std::string_view s, std::string_view* rest) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) {
    *rest = {};
    return {};
  }
  size_t e = s.find_first_of(" \t", b);
  *rest = e == std::string_view::npos ? std::string_view{} : s.substr(e);
  return s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
}

std::string_view base(std::string_view w) {
  size_t slash = w.rfind('/');
  return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

// Interpreters whose processes are told apart by the script they run.
bool interpreter(std::string_view w) {
  constexpr std::array<std::string_view, 9> kNames = {"python", "node", "ruby", "perl", "bash", "sh", "php", "Rscript", "julia"};
  for (std::string_view n : kNames)
    if (w == n || (w.size() > n.size() && w.substr(0, n.size()) == n && (w[n.size()] == '.' || (w[n.size()] >= '0' && w[n.size()] <= '9'))))
      return true;
  return false;
}

}  // namespace

std::string program(std::string_view command) {
  std::string_view rest;
  std::string_view w = first_word(command, &rest);
  if (w.empty() || w.front() == '[') return {};
  if (w.substr(0, 5) == "ray::") {
    w = w.substr(5);
    w = w.substr(0, w.find('.'));
    return std::string(w.substr(0, kMaxName));
  }
  w = base(w);
  if (!w.empty() && w.back() == ':') w.remove_suffix(1);
  std::string name(w.substr(0, kMaxName));
  if (interpreter(w)) {
    // The first argument that is not an option: the script (or "-m module").
    for (int k = 0; k < 8; ++k) {
      std::string_view a = first_word(rest, &rest);
      if (a.empty()) break;
      if (a == "-m") {
        a = first_word(rest, &rest);
        if (!a.empty()) name += " -m " + std::string(a.substr(0, kMaxName));
        break;
      }
      if (a.front() == '-') continue;
      name += " " + std::string(base(a).substr(0, kMaxName));
      break;
    }
  }
  return name.substr(0, 2 * kMaxName);
}

}  // namespace aimem::process_name
