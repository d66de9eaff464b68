/* SPDX-License-Identifier: MIT */
// Output files the tools write whole (stats JSON, ready files, perf maps), written so
// that a reader never sees half a file and nothing but a regular file at the path is
// ever replaced:
//  - checkOutputPath(): at start-up, the path must be a regular file or not exist, in
//    an existing directory: a device, a directory or a symlink there is refused before
//    any work is done;
//  - AtomicFile: the content goes to a fresh temporary in the same directory created
//    by mkstemp() (O_CREAT|O_EXCL: never an existing file, never through a symlink
//    planted at a predictable name), then is renamed over the path, after checking
//    again that the path is not something else than a regular file.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace jitprov::tools {

// "" when `path` may be written by AtomicFile, else why not.
inline std::string checkOutputPath(const std::string& path) {
  if (path.empty()) return "empty path";
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return S_ISLNK(st.st_mode)   ? "is a symbolic link (refused: write to the file itself)"
             : S_ISDIR(st.st_mode) ? "is a directory"
                                   : "exists and is not a regular file";
    return "";
  }
  if (errno != ENOENT) return std::strerror(errno);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) return "directory " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory";
  if (access(dir.c_str(), W_OK) != 0) return "directory " + dir + ": " + std::strerror(errno);
  return "";
}

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() { abort(); }

  // Creates the temporary. False (and error()) on failure.
  bool open(const std::string& path) {
    abort();
    path_ = path;
    if (std::string why = checkOutputPath(path); !why.empty()) return fail(why);
    tmp_ = path + ".XXXXXX";
    const int fd = mkstemp(tmp_.data());
    if (fd < 0) return fail(std::string("create a temporary beside it: ") + std::strerror(errno));
    (void)fchmod(fd, 0644);  // mkstemp makes it 0600; the files are meant to be read
    f_ = fdopen(fd, "w");
    if (f_ == nullptr) {
      close(fd);
      unlink(tmp_.c_str());
      return fail(std::strerror(errno));
    }
    return true;
  }
  FILE* file() const noexcept { return f_; }
  // Writes everything, closes and renames over the path.
  bool commit() {
    if (f_ == nullptr) return fail("not open");
    const bool written = std::fflush(f_) == 0 && !std::ferror(f_);
    const int close_rc = std::fclose(f_);
    f_ = nullptr;
    if (!written || close_rc != 0) return cleanup(std::string("write: ") + std::strerror(errno));
    if (std::string why = checkOutputPath(path_); !why.empty()) return cleanup(why);
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) return cleanup(std::string("rename: ") + std::strerror(errno));
    tmp_.clear();
    return true;
  }
  // Drops the temporary (nothing at the path changes).
  void abort() noexcept {
    if (f_ != nullptr) std::fclose(f_);
    f_ = nullptr;
    if (!tmp_.empty()) unlink(tmp_.c_str());
    tmp_.clear();
  }
  const std::string& error() const noexcept { return error_; }

 private:
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool cleanup(std::string why) {
    abort();
    return fail(std::move(why));
  }
  std::string path_, tmp_, error_;
  FILE* f_ = nullptr;
};

// The whole of `text` at `path`, atomically. "" or why not.
inline std::string writeFileAtomically(const std::string& path, const std::string& text) {
  AtomicFile f;
  if (!f.open(path)) return f.error();
  if (std::fwrite(text.data(), 1, text.size(), f.file()) != text.size()) return std::strerror(errno);
  return f.commit() ? std::string() : f.error();
}

}  // namespace jitprov::tools
