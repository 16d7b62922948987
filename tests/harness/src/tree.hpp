// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

// The fake sysfs as an in-memory tree of directories, attribute files and symlinks.
// Attribute files carry the kernel's behaviour as functions: a read returns the value,
// a write returns 0 or an errno, and either may block as the real attribute would.
// Thread-safe: the tree lock is held only to find or change nodes, never while a
// read or write function runs.
namespace vfready::fakehost {

struct Attribute {
  std::function<std::string()> read;           // empty: not readable (EACCES on open)
  std::function<int(std::string_view)> write;  // empty: not writable (EACCES on open)
  // Asked before each read: an errno fails it (a show() that returns one), 0 reads on.
  // Empty: reads never fail.
  std::function<int()> read_error{};
};

class Tree {
 public:
  enum class Kind { kDir, kFile, kLink };

  struct Entry {
    Kind kind;
    unsigned mode;
    std::string link_target;                // kLink
    std::shared_ptr<const Attribute> attr;  // kFile
  };

  // Paths are relative to the root, '/'-separated, without a leading '/'.
  // Parents are created as needed. Adding over an existing entry replaces it.
  void add_file(const std::string& path, Attribute attr, unsigned mode = 0644);
  // A read-only file with a fixed value ("\n" is appended, as sysfs prints).
  void add_value(const std::string& path, const std::string& value, unsigned mode = 0444);
  void add_link(const std::string& path, const std::string& target);
  void add_dir(const std::string& path);
  // Removes the entry and everything under it; false when there was none.
  bool remove(const std::string& path);
  // Moves an entry (and what is under it); false when `from` does not exist.
  bool rename(const std::string& from, const std::string& to);

  // Called, outside the tree's lock, with the paths of symlinks that went away or now
  // point elsewhere (removed, replaced, moved): the FUSE mount has the kernel forget
  // what it cached of them. Set before the tree is served.
  void on_links_changed(std::function<void(const std::vector<std::string>&)> observer);

  [[nodiscard]] bool exists(const std::string& path) const;
  // nullptr when absent. The entry is a copy: safe to use without the lock.
  [[nodiscard]] std::unique_ptr<Entry> stat(std::string_view path) const;
  // Names in a directory, sorted; empty when it is not a directory.
  [[nodiscard]] std::vector<std::string> list(std::string_view path) const;

 private:
  struct Node {
    Entry entry;
    std::map<std::string, std::unique_ptr<Node>, std::less<>> children;
  };

  Node* find(std::string_view path) const;
  Node* make_parents(const std::string& path, std::string* leaf);
  std::unique_ptr<Node> detach(std::string_view path);
  // The links in `node` (at `path`) and under it, appended to `out`.
  static void links_in(const Node& node, const std::string& path, std::vector<std::string>* out);
  // Puts `node` at `leaf` of `parent`, noting the links of what it replaces.
  static void put(Node* parent, const std::string& parent_path, const std::string& leaf,
                  std::unique_ptr<Node> node, std::vector<std::string>* gone);
  void notify(const std::vector<std::string>& gone) const;

  mutable std::mutex mu_;
  std::function<void(const std::vector<std::string>&)> observer_;  // guarded by mu_
  std::unique_ptr<Node> root_ = std::make_unique<Node>(Node{{Kind::kDir, 0755, {}, {}}, {}});
};

}  // namespace vfready::fakehost
