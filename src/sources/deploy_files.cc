// See deploy_files.h.
#include "sources/deploy_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>

namespace aimem {
namespace {

constexpr size_t kMaxFolderFiles = 2000;
constexpr int kMaxFolderDepth = 16;

}  // namespace

bool is_folder(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::vector<std::string>> deployment_files_under(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) return make_error(fmt::format("{}: cannot read the folder: {}", folder, ec.message()));
  size_t seen = 0;
  for (; it != end; it.increment(ec)) {
    if (ec) return make_error(fmt::format("{}: cannot read the folder: {}", folder, ec.message()));
    if (++seen > 50 * kMaxFolderFiles)
      return make_error(fmt::format("{}: more than {} entries; name the deployment folder itself", folder, 50 * kMaxFolderFiles));
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory(ec)) {
      if ((!name.empty() && name[0] == '.') || it.depth() >= kMaxFolderDepth) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const std::string ext = p.extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".service") continue;
    out.push_back(p.string());
    if (out.size() > kMaxFolderFiles)
      return make_error(fmt::format("{}: more than {} deployment files; name fewer", folder, kMaxFolderFiles));
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) return make_error(fmt::format("{}: a folder with no *.yaml, *.yml or *.service file to check", folder));
  return out;
}

Result<std::string> read_deployment_file(const std::string& path, uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return make_error(fmt::format("{}: a folder; name the files to check", path));
  if (uint64_t(st.st_size) > max_bytes)
    return make_error(fmt::format("{}: {} bytes, more than the {} MiB aimem check reads from one file", path,
                                  uint64_t(st.st_size), max_bytes >> 20));
  std::ifstream f(path, std::ios::binary);  // not opened for writing: check never changes its inputs
  if (!f) return make_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::string buf(max_bytes + 1, '\0');
  f.read(buf.data(), std::streamsize(buf.size()));
  buf.resize(size_t(f.gcount()));
  buf.shrink_to_fit();
  return buf;
}

}  // namespace aimem
