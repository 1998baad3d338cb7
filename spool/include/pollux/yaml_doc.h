// A small YAML document model over libyaml, for the project's own files
// (hints, agent state): block maps, sequences and plain scalars.
//
// The parser is meant for untrusted input: it refuses aliases, anchors and
// tags, duplicate keys, non-scalar keys, multi-document streams, and stops
// at a depth and node-count limit before building anything large. The
// emitter writes a canonical layout, so emit(parse(emit(x))) == emit(x).
#ifndef POLLUX_YAML_DOC_H
#define POLLUX_YAML_DOC_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pollux::yaml {

/// One node of a parsed document.
struct Node {
  enum class Kind { kScalar, kMap, kSeq };
  Kind kind = Kind::kScalar;
  std::string scalar;  ///< text of a scalar
  bool plain = true;   ///< scalar was unquoted (numbers and booleans must be)
  std::vector<std::pair<std::string, Node>> map;  ///< keys in document order, unique
  std::vector<Node> seq;
  int line = 0;  ///< 1-based line of the node's start, for messages

  /// The value under `key` of a map node, or nullptr.
  const Node* find(std::string_view key) const noexcept;
};

struct ParseLimits {
  std::size_t max_depth = 8;     ///< nesting of maps and sequences
  std::size_t max_nodes = 20000;
  std::size_t max_scalar = 4096; ///< bytes of one scalar
};

/// Parses one document. On failure returns nullopt and sets `error` to a
/// one-line reason ("line 3: duplicate key 'step'"). Never throws.
std::optional<Node> parse(std::string_view text, std::string& error,
                          const ParseLimits& limits = {}) noexcept;

/// Builds a document with libyaml's emitter. Methods throw
/// std::runtime_error if libyaml reports an error (out of memory).
class Emitter {
 public:
  Emitter();
  ~Emitter();
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  /// `flow` writes the collection on one line ({a: 1, b: 2}).
  void begin_map(bool flow = false);
  void end_map();
  void begin_seq(bool flow = false);
  void end_seq();
  /// A plain scalar (numbers, booleans, keys).
  void plain(std::string_view text);
  /// A string scalar, quoted when YAML would otherwise read it differently.
  void string(std::string_view text);
  void number(double v);     ///< shortest text that reads back to the same double
  void number(long long v);
  void boolean(bool v);
  /// A key and its value, in an open map.
  void field(std::string_view key, double v) { plain(key), number(v); }
  void field(std::string_view key, long long v) { plain(key), number(v); }
  void field(std::string_view key, int v) { plain(key), number(static_cast<long long>(v)); }
  void field(std::string_view key, bool v) { plain(key), boolean(v); }

  /// Ends the document and returns its text.
  std::string finish();

 private:
  struct Impl;
  Impl* impl_;
};

/// Shortest decimal text that std::from_chars reads back as exactly `v`.
std::string format_number(double v);

/// Typed access to the fields of a map node with range checks. Every
/// failure records a one-line reason naming the field's path and line and
/// makes ok() false; later calls become no-ops so that the first reason is
/// kept. finish() rejects keys that were never asked for.
class MapReader {
 public:
  MapReader(const Node& node, std::string path);

  bool ok() const noexcept { return error_.empty(); }
  const std::string& error() const noexcept { return error_; }

  /// Required fields (missing -> error). Ranges are inclusive.
  double real(std::string_view key, double lo, double hi);
  long long integer(std::string_view key, long long lo, long long hi);
  bool boolean(std::string_view key);
  std::string text(std::string_view key, std::size_t max_len);
  /// Required sub-map or sequence; nullptr on error.
  const Node* map(std::string_view key);
  const Node* seq(std::string_view key, std::size_t max_items);

  /// Whether an optional field is present (and marks it as known).
  bool has(std::string_view key);

  /// Reads the sub-map `key` with `read(MapReader&)`, rejects keys `read`
  /// did not ask for, and takes over its first error. Returns read()'s
  /// value (value-initialised when the map is missing).
  template <typename Read>
  auto sub(std::string_view key, Read read) -> decltype(read(std::declval<MapReader&>()));
  /// Reads each map of the sequence `key` (at most `max_items`) likewise.
  template <typename Read>
  auto each(std::string_view key, std::size_t max_items, Read read)
      -> std::vector<decltype(read(std::declval<MapReader&>()))>;
  /// Takes over `child`'s error if this reader has none yet.
  void adopt(const MapReader& child);

  /// Fails if the map holds a key none of the calls above asked for.
  bool finish();

  /// Records an error for a check the caller makes itself.
  void fail(std::string_view key, const std::string& what);
  /// Path of a field, for messages ("limits.max_batch").
  std::string field(std::string_view key) const;

 private:
  const Node* get(std::string_view key, Node::Kind kind);
  const Node& node_;
  std::string path_;
  std::vector<std::string> known_;
  std::string error_;
};

template <typename Read>
auto MapReader::sub(std::string_view key, Read read) -> decltype(read(std::declval<MapReader&>())) {
  const Node* n = map(key);
  if (n == nullptr) return {};
  MapReader child(*n, field(key));
  auto value = read(child);
  child.finish();
  adopt(child);
  return value;
}

template <typename Read>
auto MapReader::each(std::string_view key, std::size_t max_items, Read read)
    -> std::vector<decltype(read(std::declval<MapReader&>()))> {
  std::vector<decltype(read(std::declval<MapReader&>()))> out;
  const Node* n = seq(key, max_items);
  if (n == nullptr) return out;
  out.reserve(n->seq.size());
  for (std::size_t i = 0; i < n->seq.size() && ok(); ++i) {
    MapReader child(n->seq[i], field(key) + "[" + std::to_string(i) + "]");
    out.push_back(read(child));
    child.finish();
    adopt(child);
  }
  return out;
}

}  // namespace pollux::yaml

#endif  // POLLUX_YAML_DOC_H
