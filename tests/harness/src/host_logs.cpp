// SPDX-License-Identifier: Apache-2.0
#include "host_logs.hpp"

#include <chrono>
#include <stdexcept>

namespace vfready::fakehost {

namespace {

FILE* open_fresh(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) {
    throw std::runtime_error("cannot create " + path);
  }
  return f;
}

// A record that cannot be written (disk full) must not stop the fake host: the test
// reading the file will see the gap.
void append(FILE* f, const std::string& line) {
  static_cast<void>(std::fputs(line.c_str(), f));
  static_cast<void>(std::fflush(f));
}

}  // namespace

HostLogs::HostLogs(const std::string& root)
    : writes_(open_fresh(root + "/writes.log")),
      probes_(open_fresh(root + "/probes.log")),
      renames_(open_fresh(root + "/renames.log")),
      kmsg_(open_fresh(root + "/dev/kmsg")),
      hangs_(open_fresh(root + "/hangs.log")) {}

HostLogs::~HostLogs() {
  // Nothing is left to do about a failed close at exit.
  static_cast<void>(std::fclose(writes_));
  static_cast<void>(std::fclose(probes_));
  static_cast<void>(std::fclose(renames_));
  static_cast<void>(std::fclose(kmsg_));
  static_cast<void>(std::fclose(hangs_));
}

std::string HostLogs::escape(std::string_view value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (byte <= 0x20 || byte >= 0x7f) {
      out += "\\x";
      out += kDigits[byte >> 4];
      out += kDigits[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out.empty() ? "\"\"" : out;
}

void HostLogs::write(const std::string& relpath, std::string_view value, int err) {
  // Values end in a newline when written by echo; the log keeps the line readable.
  if (!value.empty() && value.back() == '\n') {
    value.remove_suffix(1);
  }
  const auto line = relpath + " " + escape(value) + " " + std::to_string(err) + "\n";
  std::lock_guard lock(mu_);
  append(writes_, line);
}

void HostLogs::hang() {
  std::lock_guard lock(mu_);
  append(hangs_, "hang\n");
}

void HostLogs::probe(const std::string& vf_pci, const std::string& guid) {
  const auto line = vf_pci + " " + guid + "\n";
  std::lock_guard lock(mu_);
  append(probes_, line);
}

void HostLogs::rename(int ifindex, const std::string& from, const std::string& to) {
  const auto line = std::to_string(ifindex) + " " + from + " " + to + "\n";
  std::lock_guard lock(mu_);
  append(renames_, line);
}

void HostLogs::kmsg(int level, const std::string& message) {
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
  std::lock_guard lock(mu_);
  const auto line = std::to_string(level) + "," + std::to_string(seq_++) + "," +
                    std::to_string(usec) + ",-;" + message + "\n";
  append(kmsg_, line);
}

}  // namespace vfready::fakehost
