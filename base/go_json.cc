#include "base/go_json.h"

#include <charconv>
#include <cmath>

namespace cloneset::base {

namespace {

// Bytes copied as they are: everything but the characters Go's encoding/json escapes and the first byte of
// U+2028/U+2029.
constexpr bool PlainJsonByteSlow(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xe2;
}

// As a table: the scan runs over every byte of the image and container IDs of every updated pod.
struct PlainJsonBytes {
  bool plain[256] = {};
  constexpr PlainJsonBytes() {
    for (int c = 0; c < 256; ++c) plain[c] = PlainJsonByteSlow(static_cast<unsigned char>(c));
  }
};
constexpr PlainJsonBytes kPlainJsonBytes;

bool PlainJsonByte(unsigned char c) { return kPlainJsonBytes.plain[c]; }

}  // namespace

void AppendGoString(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < value.size(); ++i) {
    // Runs of plain bytes (nearly every annotation value) are appended at once.
    size_t run = i;
    while (run < value.size() && PlainJsonByte(static_cast<unsigned char>(value[run]))) ++run;
    if (run > i) {
      out.append(value.data() + i, run - i);
      i = run;
      if (i == value.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '<': case '>': case '&':
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else if (c == 0xe2 && i + 2 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(value[i + 2]) == 0xa8 ||
                    static_cast<unsigned char>(value[i + 2]) == 0xa9)) {
          out += static_cast<unsigned char>(value[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

// Go's encoding/json float64 rendering: shortest round-trip digits, 'f' format for 1e-6 <= |v| < 1e21, else 'e'
// with a one-digit negative exponent written without its leading zero ("1e-7", but "1e+21").
void AppendGoNumber(std::string& out, double v) {
  char buf[64];
  const double abs = std::fabs(v);
  const bool exp_format = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  auto res = std::to_chars(buf, buf + sizeof(buf), v,
                           exp_format ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (exp_format) {
    const size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
  }
  out += s;
}

}  // namespace cloneset::base
