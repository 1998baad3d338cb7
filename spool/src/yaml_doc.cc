// YAML document model over libyaml (see pollux/yaml_doc.h).
#include "pollux/yaml_doc.h"

#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace pollux::yaml {

const Node* Node::find(std::string_view key) const noexcept {
  for (const auto& kv : map)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Parser: recursive descent over libyaml's event stream.
// ---------------------------------------------------------------------------
namespace {

class EventParser {
 public:
  EventParser(std::string_view text, const ParseLimits& limits) : limits_(limits) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~EventParser() {
    if (have_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }

  std::optional<Node> document() {
    if (!next() || event_.type != YAML_STREAM_START_EVENT) return fail_unexpected("stream start");
    if (!next()) return std::nullopt;
    if (event_.type == YAML_STREAM_END_EVENT) return fail("empty document");
    if (event_.type != YAML_DOCUMENT_START_EVENT) return fail_unexpected("document start");
    if (!next()) return std::nullopt;
    std::optional<Node> root = node(0);
    if (!root) return std::nullopt;
    if (!next() || event_.type != YAML_DOCUMENT_END_EVENT) return fail_unexpected("document end");
    if (!next()) return std::nullopt;
    if (event_.type != YAML_STREAM_END_EVENT) return fail("more than one document");
    return root;
  }

  const std::string& error() const { return error_; }

 private:
  bool next() {
    if (have_event_) yaml_event_delete(&event_);
    have_event_ = false;
    if (!yaml_parser_parse(&parser_, &event_)) {
      const char* problem = parser_.problem != nullptr ? parser_.problem : "syntax error";
      error_ = "line " + std::to_string(parser_.problem_mark.line + 1) + ": " + problem;
      return false;
    }
    have_event_ = true;
    return true;
  }

  int line() const { return static_cast<int>(event_.start_mark.line) + 1; }

  std::nullopt_t fail(const std::string& what) {
    if (error_.empty()) error_ = "line " + std::to_string(line()) + ": " + what;
    return std::nullopt;
  }
  std::nullopt_t fail_unexpected(const char* wanted) {
    if (!error_.empty() || !have_event_) return std::nullopt;
    return fail(std::string("expected ") + wanted);
  }

  // Why the start of a sequence or map at `depth` is refused (an anchor, a
  // tag, too deep), or nullptr.
  const char* refused_collection(const yaml_char_t* anchor, int implicit, std::size_t depth) const {
    if (anchor != nullptr) return "anchors are not allowed";
    if (!implicit) return "tags are not allowed";
    if (depth + 1 > limits_.max_depth) return "nested too deeply";
    return nullptr;
  }

  // Parses the node whose first event is current.
  std::optional<Node> node(std::size_t depth) {
    if (++count_ > limits_.max_nodes) return fail("too many nodes");
    Node n;
    n.line = line();
    switch (event_.type) {
      case YAML_ALIAS_EVENT:
        return fail("aliases are not allowed");
      case YAML_SCALAR_EVENT: {
        const auto& s = event_.data.scalar;
        if (s.anchor != nullptr) return fail("anchors are not allowed");
        if (s.tag != nullptr) return fail("tags are not allowed");
        if (s.length > limits_.max_scalar) return fail("scalar too long");
        n.kind = Node::Kind::kScalar;
        n.scalar.assign(reinterpret_cast<const char*>(s.value), s.length);
        n.plain = s.style == YAML_PLAIN_SCALAR_STYLE;
        return n;
      }
      case YAML_SEQUENCE_START_EVENT: {
        const auto& s = event_.data.sequence_start;
        if (const char* why = refused_collection(s.anchor, s.implicit, depth)) return fail(why);
        n.kind = Node::Kind::kSeq;
        for (;;) {
          if (!next()) return std::nullopt;
          if (event_.type == YAML_SEQUENCE_END_EVENT) return n;
          std::optional<Node> item = node(depth + 1);
          if (!item) return std::nullopt;
          n.seq.push_back(std::move(*item));
        }
      }
      case YAML_MAPPING_START_EVENT: {
        const auto& m = event_.data.mapping_start;
        if (const char* why = refused_collection(m.anchor, m.implicit, depth)) return fail(why);
        n.kind = Node::Kind::kMap;
        for (;;) {
          if (!next()) return std::nullopt;
          if (event_.type == YAML_MAPPING_END_EVENT) return n;
          std::optional<Node> key = node(depth + 1);
          if (!key) return std::nullopt;
          if (key->kind != Node::Kind::kScalar) return fail("map keys must be scalars");
          if (n.find(key->scalar) != nullptr) {
            error_ = "line " + std::to_string(key->line) + ": duplicate key '" + key->scalar + "'";
            return std::nullopt;
          }
          if (!next()) return std::nullopt;
          std::optional<Node> value = node(depth + 1);
          if (!value) return std::nullopt;
          n.map.emplace_back(std::move(key->scalar), std::move(*value));
        }
      }
      default:
        break;
    }
    return fail("unexpected YAML event");
  }

  ParseLimits limits_;
  yaml_parser_t parser_;
  yaml_event_t event_{};
  bool have_event_ = false;
  std::size_t count_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Node> parse(std::string_view text, std::string& error, const ParseLimits& limits) noexcept {
  try {
    EventParser p(text, limits);
    std::optional<Node> root = p.document();
    error = root ? std::string() : p.error();
    if (!root && error.empty()) error = "unreadable YAML";
    return root;
  } catch (const std::exception& e) {  // bad_alloc while building nodes
    error = std::string("YAML parser: ") + e.what();
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------
// Emitter
// ---------------------------------------------------------------------------
struct Emitter::Impl {
  yaml_emitter_t emitter;
  std::string out;
  bool finished = false;

  static int write(void* data, unsigned char* buffer, size_t size) {
    static_cast<Impl*>(data)->out.append(reinterpret_cast<const char*>(buffer), size);
    return 1;
  }
  void emit(yaml_event_t& ev, int init_ok) {
    if (!init_ok) throw std::runtime_error("YAML emitter: cannot create event");
    if (!yaml_emitter_emit(&emitter, &ev)) {
      const char* problem = emitter.problem != nullptr ? emitter.problem : "emitter error";
      throw std::runtime_error(std::string("YAML emitter: ") + problem);
    }
  }
  void scalar(std::string_view text, yaml_scalar_style_t style) {
    yaml_event_t ev;
    const int ok = yaml_scalar_event_initialize(
        &ev, nullptr, nullptr, reinterpret_cast<yaml_char_t*>(const_cast<char*>(text.data())),
        static_cast<int>(text.size()), 1, 1, style);
    emit(ev, ok);
  }
};

Emitter::Emitter() : impl_(new Impl) {
  yaml_emitter_initialize(&impl_->emitter);
  yaml_emitter_set_output(&impl_->emitter, &Impl::write, impl_);
  yaml_emitter_set_unicode(&impl_->emitter, 1);
  yaml_emitter_set_width(&impl_->emitter, -1);
  yaml_emitter_set_indent(&impl_->emitter, 2);
  yaml_event_t ev;
  impl_->emit(ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
  impl_->emit(ev, yaml_document_start_event_initialize(&ev, nullptr, nullptr, nullptr, 1));
}

Emitter::~Emitter() {
  yaml_emitter_delete(&impl_->emitter);
  delete impl_;
}

void Emitter::begin_map(bool flow) {
  yaml_event_t ev;
  impl_->emit(ev, yaml_mapping_start_event_initialize(
                      &ev, nullptr, nullptr, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}
void Emitter::end_map() {
  yaml_event_t ev;
  impl_->emit(ev, yaml_mapping_end_event_initialize(&ev));
}
void Emitter::begin_seq(bool flow) {
  yaml_event_t ev;
  impl_->emit(ev, yaml_sequence_start_event_initialize(
                      &ev, nullptr, nullptr, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}
void Emitter::end_seq() {
  yaml_event_t ev;
  impl_->emit(ev, yaml_sequence_end_event_initialize(&ev));
}
void Emitter::plain(std::string_view text) { impl_->scalar(text, YAML_PLAIN_SCALAR_STYLE); }
void Emitter::string(std::string_view text) { impl_->scalar(text, YAML_SINGLE_QUOTED_SCALAR_STYLE); }
void Emitter::number(double v) { plain(format_number(v)); }
void Emitter::number(long long v) { plain(std::to_string(v)); }
void Emitter::boolean(bool v) { plain(v ? "true" : "false"); }

std::string Emitter::finish() {
  if (!impl_->finished) {
    yaml_event_t ev;
    impl_->emit(ev, yaml_document_end_event_initialize(&ev, 1));
    impl_->emit(ev, yaml_stream_end_event_initialize(&ev));
    yaml_emitter_flush(&impl_->emitter);
    impl_->finished = true;
  }
  return impl_->out;
}

std::string format_number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ---------------------------------------------------------------------------
// MapReader
// ---------------------------------------------------------------------------
namespace {

const char* kind_name(Node::Kind k) {
  switch (k) {
    case Node::Kind::kScalar: return "a scalar";
    case Node::Kind::kMap: return "a map";
    case Node::Kind::kSeq: return "a sequence";
  }
  return "?";
}

}  // namespace

MapReader::MapReader(const Node& node, std::string path) : node_(node), path_(std::move(path)) {
  if (node.kind != Node::Kind::kMap)
    error_ = "line " + std::to_string(node.line) + ": " + (path_.empty() ? "document" : path_) +
             ": expected a map, found " + kind_name(node.kind);
}

std::string MapReader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void MapReader::fail(std::string_view key, const std::string& what) {
  if (!error_.empty()) return;
  const Node* n = node_.kind == Node::Kind::kMap ? node_.find(key) : nullptr;
  const int line = n != nullptr ? n->line : node_.line;
  error_ = "line " + std::to_string(line) + ": " + field(key) + ": " + what;
}

const Node* MapReader::get(std::string_view key, Node::Kind kind) {
  if (!ok()) return nullptr;
  known_.emplace_back(key);
  const Node* n = node_.find(key);
  if (n == nullptr) {
    error_ = "line " + std::to_string(node_.line) + ": " + field(key) + ": missing";
    return nullptr;
  }
  if (n->kind != kind) {
    fail(key, std::string("expected ") + kind_name(kind) + ", found " + kind_name(n->kind));
    return nullptr;
  }
  if (kind == Node::Kind::kScalar && !n->plain) {
    fail(key, "must not be quoted");
    return nullptr;
  }
  return n;
}

double MapReader::real(std::string_view key, double lo, double hi) {
  const Node* n = get(key, Node::Kind::kScalar);
  if (n == nullptr) return 0;
  double v = 0;
  const char* b = n->scalar.data();
  const char* e = b + n->scalar.size();
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e || n->scalar.empty()) {
    fail(key, "'" + n->scalar + "' is not a number");
    return 0;
  }
  if (!std::isfinite(v)) {
    fail(key, "'" + n->scalar + "' is not finite");
    return 0;
  }
  if (v < lo || v > hi) {
    fail(key, n->scalar + " is out of range [" + format_number(lo) + ", " + format_number(hi) + "]");
    return 0;
  }
  return v;
}

long long MapReader::integer(std::string_view key, long long lo, long long hi) {
  const Node* n = get(key, Node::Kind::kScalar);
  if (n == nullptr) return 0;
  long long v = 0;
  const char* b = n->scalar.data();
  const char* e = b + n->scalar.size();
  const auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range) {
    fail(key, n->scalar + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return 0;
  }
  if (r.ec != std::errc() || r.ptr != e || n->scalar.empty()) {
    fail(key, "'" + n->scalar + "' is not an integer");
    return 0;
  }
  if (v < lo || v > hi) {
    fail(key, n->scalar + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return 0;
  }
  return v;
}

bool MapReader::boolean(std::string_view key) {
  const Node* n = get(key, Node::Kind::kScalar);
  if (n == nullptr) return false;
  if (n->scalar == "true") return true;
  if (n->scalar == "false") return false;
  fail(key, "'" + n->scalar + "' is not true or false");
  return false;
}

std::string MapReader::text(std::string_view key, std::size_t max_len) {
  if (!ok()) return {};
  known_.emplace_back(key);
  const Node* n = node_.find(key);
  if (n == nullptr) {
    error_ = "line " + std::to_string(node_.line) + ": " + field(key) + ": missing";
    return {};
  }
  if (n->kind != Node::Kind::kScalar) {
    fail(key, std::string("expected a scalar, found ") + kind_name(n->kind));
    return {};
  }
  if (n->scalar.size() > max_len) {
    fail(key, "longer than " + std::to_string(max_len) + " bytes");
    return {};
  }
  return n->scalar;
}

const Node* MapReader::map(std::string_view key) { return get(key, Node::Kind::kMap); }

const Node* MapReader::seq(std::string_view key, std::size_t max_items) {
  const Node* n = get(key, Node::Kind::kSeq);
  if (n != nullptr && n->seq.size() > max_items) {
    fail(key, std::to_string(n->seq.size()) + " items, more than " + std::to_string(max_items));
    return nullptr;
  }
  return n;
}

bool MapReader::has(std::string_view key) {
  known_.emplace_back(key);
  return node_.kind == Node::Kind::kMap && node_.find(key) != nullptr;
}

void MapReader::adopt(const MapReader& child) {
  if (error_.empty()) error_ = child.error_;
}

bool MapReader::finish() {
  if (!ok()) return false;
  for (const auto& kv : node_.map) {
    if (std::find(known_.begin(), known_.end(), kv.first) == known_.end()) {
      error_ = "line " + std::to_string(kv.second.line) + ": " + field(kv.first) + ": unknown key";
      return false;
    }
  }
  return true;
}

}  // namespace pollux::yaml
