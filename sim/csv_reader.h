// A strict reader for the small comma-separated tables of the traces and
// workloads: a header line naming the columns, then one record per line.
// No quoting (the data has none); blank lines are skipped; a record with
// the wrong number of fields, or a field that does not parse as the type
// asked for, is an InputError naming the file and the line.
#ifndef POLLUX_SIM_CSV_READER_H
#define POLLUX_SIM_CSV_READER_H

#include <string>
#include <string_view>
#include <vector>

namespace pollux::sim {

class CsvTable {
 public:
  /// Reads `path` and checks that every column in `required` is in its
  /// header (other columns are allowed and ignored).
  static CsvTable read(const std::string& path, const std::vector<std::string>& required);

  struct Row {
    int line = 0;                    ///< line number in the file, from 1
    std::vector<std::string> fields;
  };

  const std::string& path() const noexcept { return path_; }
  const std::vector<Row>& rows() const noexcept { return rows_; }
  const std::vector<std::string>& header() const noexcept { return header_; }
  /// Index of a column named in the header; InputError if absent.
  int column(std::string_view name) const;

  /// Typed access to row `r`, column `c`; InputError "FILE:LINE: column
  /// NAME: ..." when the text is not a number of that kind.
  std::string text(const Row& r, int c) const;
  double number(const Row& r, int c) const;           ///< finite double
  long long integer(const Row& r, int c) const;       ///< integral (1e3 and 12.0 accepted)

  /// InputError at this row: "FILE:LINE: what".
  [[noreturn]] void fail(const Row& r, const std::string& what) const;

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace pollux::sim

#endif  // POLLUX_SIM_CSV_READER_H
