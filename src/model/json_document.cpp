// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/json_document.hpp"

#include <set>
#include <vector>

#include "text.hpp"

namespace vfready::model {

namespace {

using nlohmann::json;

// Where the parser is: one frame per open object or array.
struct Frame {
  bool array = false;
  long index = -1;  // arrays: the last element that started
  std::string key;  // objects: the last key read
  std::set<std::string> keys;
};

// A refusal from inside the parser's callback.
struct Refused {
  std::string what;
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string out = "$";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    if (f.array) {
      // The innermost array is at the element being read, one past the last started.
      const long at = i + 1 == frames.size() ? f.index + 1 : f.index;
      out += "[" + std::to_string(at < 0 ? 0 : at) + "]";
    } else if (!f.key.empty()) {
      out += "." + f.key;
    }
  }
  return out;
}

}  // namespace

Result<json> parse_json_document(const std::string& file, const std::string& text,
                                 std::size_t max_depth) {
  std::vector<Frame> frames;
  const auto element_started = [&] {
    if (!frames.empty() && frames.back().array) {
      ++frames.back().index;
    }
  };
  const json::parser_callback_t track = [&](int /*depth*/, json::parse_event_t event,
                                            json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        element_started();
        if (frames.size() >= max_depth) {
          throw Refused{"is nested deeper than " + std::to_string(max_depth) + " levels"};
        }
        frames.push_back({event == json::parse_event_t::array_start, -1, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        break;
      case json::parse_event_t::key: {
        auto& f = frames.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw Refused{"appears twice in its object; each key may be given once"};
        }
        break;
      }
      case json::parse_event_t::value:
        element_started();
        break;
    }
    return true;
  };
  // The library's reader stops at a NUL as at the end: bytes after one would be ignored.
  // A JSON text has none (a string spells it \u0000).
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    return Error{file + ": not valid JSON: a NUL byte at offset " + std::to_string(nul) +
                 "; nothing may follow the document"};
  }
  try {
    return json::parse(text, track);
  } catch (const Refused& r) {
    return Error{file + ": " + text::printable(path_of(frames)) + ": " + r.what};
  } catch (const json::exception& e) {
    // Syntax errors, numbers that do not fit, invalid UTF-8: the library's words, and
    // where it stopped, without its "[json.exception.parse_error.101] " tag.
    std::string_view what = e.what();
    if (what.starts_with("[json.exception.")) {
      const auto end = what.find("] ");
      what.remove_prefix(end == std::string_view::npos ? 0 : end + 2);
    }
    return Error{file + ": " + text::printable(path_of(frames)) +
                 ": not valid JSON: " + text::printable(std::string(what))};
  }
}

}  // namespace vfready::model
