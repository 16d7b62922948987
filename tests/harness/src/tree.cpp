// SPDX-License-Identifier: Apache-2.0
#include "tree.hpp"

namespace vfready::fakehost {

namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    if (end > start) {
      out.push_back(path.substr(start, end - start));
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

Tree::Node* Tree::find(std::string_view path) const {
  Node* node = root_.get();
  for (auto name : components(path)) {
    if (node->entry.kind != Kind::kDir) {
      return nullptr;
    }
    auto it = node->children.find(name);
    if (it == node->children.end()) {
      return nullptr;
    }
    node = it->second.get();
  }
  return node;
}

Tree::Node* Tree::make_parents(const std::string& path, std::string* leaf) {
  auto parts = components(path);
  if (parts.empty()) {
    return nullptr;
  }
  *leaf = std::string(parts.back());
  parts.pop_back();
  Node* node = root_.get();
  for (auto name : parts) {
    auto it = node->children.find(name);
    if (it == node->children.end() || it->second->entry.kind != Kind::kDir) {
      auto dir = std::make_unique<Node>(Node{{Kind::kDir, 0755, {}, {}}, {}});
      Node* raw = dir.get();
      node->children[std::string(name)] = std::move(dir);
      node = raw;
    } else {
      node = it->second.get();
    }
  }
  return node;
}

void Tree::links_in(const Node& node, const std::string& path, std::vector<std::string>* out) {
  if (node.entry.kind == Kind::kLink) {
    out->push_back(path);
  }
  for (const auto& [name, child] : node.children) {
    links_in(*child, path + "/" + name, out);
  }
}

void Tree::put(Node* parent, const std::string& parent_path, const std::string& leaf,
               std::unique_ptr<Node> node, std::vector<std::string>* gone) {
  auto& slot = parent->children[leaf];
  if (slot) {
    const bool same_link = slot->entry.kind == Kind::kLink && node->entry.kind == Kind::kLink &&
                           slot->entry.link_target == node->entry.link_target;
    if (!same_link) {
      links_in(*slot, parent_path.empty() ? leaf : parent_path + "/" + leaf, gone);
    }
  }
  slot = std::move(node);
}

void Tree::notify(const std::vector<std::string>& gone) const {
  if (gone.empty()) {
    return;
  }
  std::function<void(const std::vector<std::string>&)> observer;
  {
    std::lock_guard lock(mu_);
    observer = observer_;
  }
  if (observer) {
    observer(gone);
  }
}

void Tree::on_links_changed(std::function<void(const std::vector<std::string>&)> observer) {
  std::lock_guard lock(mu_);
  observer_ = std::move(observer);
}

namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

void Tree::add_file(const std::string& path, Attribute attr, unsigned mode) {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    std::string leaf;
    if (Node* parent = make_parents(path, &leaf)) {
      put(parent, parent_of(path), leaf,
          std::make_unique<Node>(Node{
              {Kind::kFile, mode, {}, std::make_shared<const Attribute>(std::move(attr))}, {}}),
          &gone);
    }
  }
  notify(gone);
}

void Tree::add_value(const std::string& path, const std::string& value, unsigned mode) {
  add_file(path, Attribute{[v = value + "\n"] { return v; }, {}}, mode);
}

void Tree::add_link(const std::string& path, const std::string& target) {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    std::string leaf;
    if (Node* parent = make_parents(path, &leaf)) {
      put(parent, parent_of(path), leaf,
          std::make_unique<Node>(Node{{Kind::kLink, 0777, target, {}}, {}}), &gone);
    }
  }
  notify(gone);
}

void Tree::add_dir(const std::string& path) {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    std::string leaf;
    if (Node* parent = make_parents(path, &leaf)) {
      auto& slot = parent->children[leaf];
      if (!slot || slot->entry.kind != Kind::kDir) {
        put(parent, parent_of(path), leaf,
            std::make_unique<Node>(Node{{Kind::kDir, 0755, {}, {}}, {}}), &gone);
      }
    }
  }
  notify(gone);
}

bool Tree::remove(const std::string& path) {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    auto node = detach(path);
    if (!node) {
      return false;
    }
    links_in(*node, path, &gone);
  }
  notify(gone);
  return true;
}

bool Tree::rename(const std::string& from, const std::string& to) {
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    auto node = detach(from);
    if (!node) {
      return false;
    }
    links_in(*node, from, &gone);
    std::string leaf;
    if (Node* to_parent = make_parents(to, &leaf)) {
      put(to_parent, parent_of(to), leaf, std::move(node), &gone);
    }
  }
  notify(gone);
  return true;
}

std::unique_ptr<Tree::Node> Tree::detach(std::string_view path) {
  const auto slash = path.rfind('/');
  const auto parent_path =
      slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
  const auto leaf = slash == std::string_view::npos ? path : path.substr(slash + 1);
  Node* parent = find(parent_path);
  if (parent == nullptr || parent->entry.kind != Kind::kDir) {
    return nullptr;
  }
  auto it = parent->children.find(leaf);
  if (it == parent->children.end()) {
    return nullptr;
  }
  auto node = std::move(it->second);
  parent->children.erase(it);
  return node;
}

bool Tree::exists(const std::string& path) const {
  std::lock_guard lock(mu_);
  return find(path) != nullptr;
}

std::unique_ptr<Tree::Entry> Tree::stat(std::string_view path) const {
  std::lock_guard lock(mu_);
  const Node* node = find(path);
  return node == nullptr ? nullptr : std::make_unique<Entry>(node->entry);
}

std::vector<std::string> Tree::list(std::string_view path) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  const Node* node = find(path);
  if (node != nullptr && node->entry.kind == Kind::kDir) {
    for (const auto& [name, child] : node->children) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace vfready::fakehost
