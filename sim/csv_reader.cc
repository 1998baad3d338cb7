// Strict CSV tables (see csv_reader.h).
#include "csv_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "input_error.h"

namespace pollux::sim {
namespace {

std::string trim(std::string_view s) {
  const char* ws = " \t\r";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trim(std::string_view(line).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

CsvTable CsvTable::read(const std::string& path, const std::vector<std::string>& required) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  CsvTable t;
  t.path_ = path;
  std::string line;
  int lineno = 0;
  bool have_header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    if (line.find('"') != std::string::npos)
      throw InputError(path, lineno, "quoted fields are not supported");
    std::vector<std::string> fields = split(line);
    if (!have_header) {
      t.header_ = std::move(fields);
      have_header = true;
      for (const std::string& name : required) {
        bool found = false;
        for (const std::string& h : t.header_) found |= h == name;
        if (!found) throw InputError(path, lineno, "header has no column '" + name + "'");
      }
      continue;
    }
    if (fields.size() != t.header_.size())
      throw InputError(path, lineno, "expected " + std::to_string(t.header_.size()) + " fields, found " +
                                         std::to_string(fields.size()));
    t.rows_.push_back(Row{lineno, std::move(fields)});
  }
  if (in.bad()) throw InputError(path, 0, "read error");
  if (!have_header) throw InputError(path, 0, "empty file (no header line)");
  return t;
}

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return static_cast<int>(i);
  throw InputError(path_, 0, "no column '" + std::string(name) + "'");
}

void CsvTable::fail(const Row& r, const std::string& what) const { throw InputError(path_, r.line, what); }

std::string CsvTable::text(const Row& r, int c) const { return r.fields.at(static_cast<std::size_t>(c)); }

double CsvTable::number(const Row& r, int c) const {
  const std::string& s = r.fields.at(static_cast<std::size_t>(c));
  const std::string& name = header_[static_cast<std::size_t>(c)];
  if (s.empty()) fail(r, "column " + name + ": empty field");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    fail(r, "column " + name + ": '" + s + "' is not a finite number");
  return v;
}

long long CsvTable::integer(const Row& r, int c) const {
  const double v = number(r, c);
  if (v != std::floor(v) || std::fabs(v) > 9.0e15)
    fail(r, "column " + header_[static_cast<std::size_t>(c)] + ": '" + r.fields[static_cast<std::size_t>(c)] +
                "' is not an integer");
  return static_cast<long long>(v);
}

}  // namespace pollux::sim
