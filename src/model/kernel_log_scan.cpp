// SPDX-License-Identifier: Apache-2.0
// The kernel log read as vfready's checks read it: the lines of the RDMA modules that say
// something is wrong (a module that does not fit the kernel, a failed probe, a device
// error), and whether one already ends the wait for a module.
#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>

#include "vfready/model/checks.hpp"

namespace vfready::model {

namespace {

bool is_rdma_module(const std::string& m) {
  return m.starts_with("mlx5") || m.starts_with("ib_") || m.starts_with("rdma") ||
         m == "mlx_compat";
}

// "6,123,456,-;text" -> "text"
std::string_view message_of(std::string_view line) {
  const auto semi = line.find(';');
  if (semi != std::string_view::npos && line.find(',') < semi) {
    line.remove_prefix(semi + 1);
  }
  // The kernel's records are at most about a kilobyte; longer text is not the kernel's.
  constexpr std::size_t kMaxRecord = 1024;
  return line.substr(0, kMaxRecord);
}

bool contains_word(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

// The signed number right after `marker` in `text` ("... error -22"), clamped to int.
std::optional<int> number_after(std::string_view text, std::string_view marker) {
  const auto at = text.find(marker);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  auto rest = text.substr(at + marker.size());
  long long n = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (ptr == rest.data()) {
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range) {
    n = rest.starts_with('-') ? std::numeric_limits<int>::min() : std::numeric_limits<int>::max();
  }
  return static_cast<int>(
      std::clamp<long long>(n, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

// "mlx5_core 0000:40:00.0: text": the module, the PCI function the line names (the
// driver core's "probe of <pci>" counts too), and the text after the prefix.
struct LogLine {
  std::string_view module;
  std::optional<PciAddress> pci;
  std::string_view text;
};

std::optional<LogLine> parse_line(std::string_view message) {
  const auto colon = message.find(": ");
  if (colon == std::string_view::npos || colon == 0) {
    return std::nullopt;
  }
  LogLine line;
  const auto head = message.substr(0, colon);
  const auto space = head.find(' ');
  line.module = head.substr(0, space);
  if (space != std::string_view::npos) {
    auto pci = PciAddress::parse(head.substr(space + 1));
    line.pci = pci ? std::optional<PciAddress>(pci.value()) : std::nullopt;
  }
  line.text = message.substr(colon + 2);
  if (!line.pci) {
    const auto of = line.text.find("probe of ");
    if (of != std::string_view::npos) {
      auto name = line.text.substr(of + 9);
      auto pci = PciAddress::parse(name.substr(0, name.find(' ')));
      line.pci = pci ? std::optional<PciAddress>(pci.value()) : std::nullopt;
    }
  }
  return line;
}

// What a line naming a PCI function says of it, if it says something is wrong.
std::optional<KernelLogProblem::Kind> device_line_kind(const LogLine& line) {
  if (!line.pci) {
    return std::nullopt;
  }
  const auto& t = line.text;
  if (contains_word(t, "probe") && (contains_word(t, "fail") || contains_word(t, "error"))) {
    return KernelLogProblem::Kind::kProbeFailed;
  }
  if (contains_word(t, "fatal") || contains_word(t, "health compromised") ||
      contains_word(t, "failed") || contains_word(t, "timeout")) {
    return KernelLogProblem::Kind::kDeviceError;
  }
  return std::nullopt;
}

}  // namespace

std::vector<KernelLogProblem> scan_kernel_log(const std::vector<std::string>& lines) {
  std::vector<KernelLogProblem> out;
  for (const auto& raw : lines) {
    const auto message = message_of(raw);
    const auto line = parse_line(message);
    if (!line || !is_rdma_module(std::string(line->module))) {
      continue;
    }
    KernelLogProblem p;
    p.module = line->module;
    p.line = message;
    if (line->text.starts_with("Unknown symbol ")) {
      p.kind = KernelLogProblem::Kind::kUnknownSymbol;
      auto symbol = line->text.substr(15);
      p.symbol = symbol.substr(0, symbol.find(' '));
      p.error = number_after(line->text, "(err ").value_or(0);
    } else if (line->text.starts_with("disagrees about version of symbol ")) {
      p.kind = KernelLogProblem::Kind::kUnknownSymbol;
      p.symbol = line->text.substr(34);
    } else if (const auto kind = device_line_kind(*line)) {
      p.kind = *kind;
      p.pci = line->pci;
      p.error = number_after(line->text, "error ")
                    .value_or(number_after(line->text, "error code ").value_or(0));
    } else {
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<std::string> load_failure_evidence(const std::vector<std::string>& required,
                                                 const std::vector<std::string>& missing,
                                                 const std::vector<std::string>& kernel_log) {
  const auto among = [](const std::vector<std::string>& v, std::string_view m) {
    return std::find(v.begin(), v.end(), m) != v.end();
  };
  for (const auto& p : scan_kernel_log(kernel_log)) {
    const bool misfit = p.kind == KernelLogProblem::Kind::kUnknownSymbol;
    if ((misfit && among(required, p.module)) ||
        ((misfit || p.kind == KernelLogProblem::Kind::kProbeFailed) && among(missing, p.module))) {
      return p.line;
    }
  }
  return std::nullopt;
}

}  // namespace vfready::model
