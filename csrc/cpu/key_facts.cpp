// Key facts of ASCII text: a port of asmr.text.facts (_codes, _words, _numeric,
// _entities). Each regular expression there is matched here by hand, trying its
// alternatives in the order Python's backtracking engine tries them; comments
// name the pattern each function stands for.
#include "asmr/key_facts.h"

#include <algorithm>
#include <bitset>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string_view>
#include <utility>

namespace asmr {
namespace {

using Span = std::pair<int64_t, int64_t>;

constexpr int64_t kMaxDigitRun = 300;  // longer runs: the Python extractor

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
inline bool is_alpha(char c) { return is_upper(c) || is_lower(c); }
inline bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
inline bool is_word(char c) { return is_alnum(c) || c == '_'; }  // \w on ASCII
// \s and str.isspace() on ASCII: the separators 0x1c-0x1f are blanks too.
inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }  // [ \t]
inline char to_lower(char c) { return is_upper(c) ? static_cast<char>(c + 32) : c; }
inline char to_upper(char c) { return is_lower(c) ? static_cast<char>(c - 32) : c; }

struct Text {
    const char* p;
    int64_t n;
    // '\0' outside the text: no class tested here holds it, as no character exists there.
    char at(int64_t i) const { return i >= 0 && i < n ? p[i] : '\0'; }
    bool has(int64_t i, std::string_view w, int64_t end) const {  // w at i, ending by end
        if (i < 0 || i + static_cast<int64_t>(w.size()) > end) return false;
        return std::string_view(p + i, w.size()) == w;
    }
    bool has_ci(int64_t i, std::string_view lower_w) const {  // case-insensitive; lower_w lower case
        if (i < 0 || i + static_cast<int64_t>(lower_w.size()) > n) return false;
        for (size_t k = 0; k < lower_w.size(); ++k)
            if (to_lower(p[i + k]) != lower_w[k]) return false;
        return true;
    }
    std::string slice(int64_t a, int64_t b) const { return std::string(p + a, p + b); }
    bool all_space(int64_t a, int64_t b) const {
        for (int64_t i = a; i < b; ++i)
            if (!is_space(p[i])) return false;
        return true;
    }
    int64_t skip_space(int64_t i) const {
        while (is_space(at(i))) ++i;
        return i;
    }
};

bool overlaps(const std::vector<Span>& taken, int64_t s, int64_t e) {
    for (const Span& t : taken)
        if (s < t.second && t.first < e) return true;
    return false;
}

// ---- codes: _CODE ------------------------------------------------------------------------
// (?<![\w-])(?:[A-Z][A-Z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Za-z]+_[A-Za-z0-9_]+|
//              [A-Z]+\d+[A-Z0-9]*|[A-Z]{2,}[a-z]?\d[\w]*)(?![\w-])
// Each alternative can end only where its greedy run ends (a shorter match is followed
// by a character of the run, which the lookahead refuses), so each is one scan.

inline bool code_may_end(const Text& t, int64_t q) { return !(is_word(t.at(q)) || t.at(q) == '-'); }

int64_t code_end(const Text& t, int64_t p) {
    const char c = t.at(p);
    if (is_upper(c)) {  // [A-Z][A-Z0-9]*(?:[_-][A-Za-z0-9]+)+
        int64_t q = p + 1;
        while (is_upper(t.at(q)) || is_digit(t.at(q))) ++q;
        bool group = false;
        while ((t.at(q) == '_' || t.at(q) == '-') && is_alnum(t.at(q + 1))) {
            q += 2;
            while (is_alnum(t.at(q))) ++q;
            group = true;
        }
        if (group && code_may_end(t, q)) return q;
    }
    if (is_alpha(c)) {  // [A-Za-z]+_[A-Za-z0-9_]+
        int64_t q = p;
        while (is_alpha(t.at(q))) ++q;
        if (t.at(q) == '_' && is_word(t.at(q + 1))) {
            int64_t r = q + 1;
            while (is_word(t.at(r))) ++r;
            if (code_may_end(t, r)) return r;
        }
    }
    if (is_upper(c)) {
        int64_t q = p;
        while (is_upper(t.at(q))) ++q;
        if (is_digit(t.at(q))) {  // [A-Z]+\d+[A-Z0-9]*
            int64_t r = q;
            while (is_upper(t.at(r)) || is_digit(t.at(r))) ++r;
            if (code_may_end(t, r)) return r;
        }
        if (q - p >= 2) {  // [A-Z]{2,}[a-z]?\d[\w]*
            int64_t r = q;
            if (is_lower(t.at(r)) && is_digit(t.at(r + 1))) ++r;
            if (is_digit(t.at(r))) {
                ++r;
                while (is_word(t.at(r))) ++r;
                if (code_may_end(t, r)) return r;
            }
        }
    }
    return -1;
}

void codes(const Text& t, std::vector<Span>* taken, std::vector<KeyFact>* out) {
    bool gate = false;  // _CODE_GATE: [_-]|[A-Z][a-z]?\d
    for (int64_t i = 0; i < t.n && !gate; ++i) {
        const char c = t.p[i];
        gate = c == '_' || c == '-' ||
               (is_upper(c) && (is_digit(t.at(i + 1)) || (is_lower(t.at(i + 1)) && is_digit(t.at(i + 2)))));
    }
    if (!gate) return;
    int64_t p = 0;
    while (p < t.n) {
        const char prev = t.at(p - 1);
        if (is_alpha(t.p[p]) && !(is_word(prev) || prev == '-')) {
            const int64_t e = code_end(t, p);
            if (e > p) {
                std::string raw = t.slice(p, e), norm;
                for (char c : raw)
                    if (c != '-' && c != '_') norm += to_upper(c);
                out->push_back({kFactCode, std::move(raw), std::move(norm)});
                taken->push_back({p, e});
                p = e;
                continue;
            }
        }
        ++p;
    }
}

// ---- months: _MONTH_RE -------------------------------------------------------------------

struct Month {
    const char* forms[4];  // in the order the pattern tries them
    int count;
    int number;
};
const Month kMonths[] = {
    {{"January", "Jan"}, 2, 1},   {{"February", "Feb"}, 2, 2},  {{"March", "Mar"}, 2, 3},
    {{"April", "Apr"}, 2, 4},     {{"May"}, 1, 5},              {{"June", "Jun"}, 2, 6},
    {{"July", "Jul"}, 2, 7},      {{"August", "Aug"}, 2, 8},
    {{"September", "Sept", "Sepember", "Sep"}, 4, 9},  // Sept?(?:ember)?
    {{"October", "Oct"}, 2, 10},  {{"November", "Nov"}, 2, 11}, {{"December", "Dec"}, 2, 12},
};

const Month* month_at(const Text& t, int64_t i, int64_t end) {
    for (const Month& m : kMonths)
        if (t.has(i, std::string_view(m.forms[m.count - 1], 3), end)) return &m;
    return nullptr;
}

bool any_month(const Text& t) {  // _ANY_MONTH.search: every form starts with its three letters
    for (int64_t i = 0; i + 3 <= t.n; ++i)
        if (is_upper(t.p[i]) && month_at(t, i, t.n)) return true;
    return false;
}

// \.?,? then `rest` at the position after them (the optional marks tried present first).
template <typename Rest>
bool after_marks(const Text& t, int64_t q, int64_t end, Rest rest) {
    for (int dot = (q < end && t.at(q) == '.') ? 1 : 0; dot >= 0; --dot)
        for (int comma = (q + dot < end && t.at(q + dot) == ',') ? 1 : 0; comma >= 0; --comma)
            if (rest(q + dot + comma)) return true;
    return false;
}

// \s+(\d{4})(?![0-9]) at q: the year's start, or -1.
int64_t blank_year(const Text& t, int64_t q) {
    if (!is_space(t.at(q))) return -1;
    const int64_t r = t.skip_space(q);
    for (int k = 0; k < 4; ++k)
        if (!is_digit(t.at(r + k))) return -1;
    return is_digit(t.at(r + 4)) ? -1 : r;
}

inline bool ordinal_suffix(const Text& t, int64_t q) {  // st|nd|rd|th
    const char a = t.at(q), b = t.at(q + 1);
    return (a == 's' && b == 't') || (a == 'n' && b == 'd') || (a == 'r' && b == 'd') || (a == 't' && b == 'h');
}

std::string two_digits(int v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d", v);
    return buf;
}

// _date_norm(y, m, d): month 0 = none, day < 0 = none.
std::string date_norm(std::string_view year, int month, int day) {
    std::string out(year);
    if (month == 0 || month < 1 || month > 12) return out;
    out += '-';
    out += two_digits(month);
    if (day >= 0) {
        out += '-';
        out += two_digits(day);
    }
    return out;
}

int parse_small(const Text& t, int64_t a, int64_t b) {
    int v = 0;
    for (int64_t i = a; i < b; ++i) v = v * 10 + (t.p[i] - '0');
    return v;
}

// _DMY.match at s: ([0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(MONTH)\.?,?\s+(\d{4})(?![0-9])
bool match_dmy(const Text& t, int64_t s, int64_t* end, int* day, int* month, int64_t* year) {
    for (int day_len = 2; day_len >= 1; --day_len) {
        if (day_len == 2 ? !(t.at(s) >= '0' && t.at(s) <= '3' && is_digit(t.at(s + 1))) : !is_digit(t.at(s)))
            continue;
        const int64_t q0 = s + day_len;
        for (int suffix = ordinal_suffix(t, q0) ? 2 : 0; suffix >= 0; suffix -= 2) {
            const int64_t q = q0 + suffix;
            if (!is_space(t.at(q))) continue;
            const int64_t r = t.skip_space(q);
            int64_t starts[2];
            int count = 0;
            if (t.has(r, "of", t.n) && is_space(t.at(r + 2))) starts[count++] = t.skip_space(r + 2);
            starts[count++] = r;
            for (int k = 0; k < count; ++k) {
                const Month* m = month_at(t, starts[k], t.n);
                if (!m) continue;
                for (int f = 0; f < m->count; ++f) {
                    const std::string_view form(m->forms[f]);
                    if (!t.has(starts[k], form, t.n)) continue;
                    int64_t y = -1;
                    if (after_marks(t, starts[k] + form.size(), t.n, [&](int64_t p) {
                            y = blank_year(t, p);
                            return y >= 0;
                        })) {
                        *end = y + 4;
                        *day = parse_small(t, s, s + day_len);
                        *month = m->number;
                        *year = y;
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

// _MONTH_BEFORE.search(text, pos, endpos): (?<![A-Za-z])(MONTH)\.?,?\s+$ with $ at endpos (where
// Python's $ may also match before a final newline, \s+ can take that newline too).
bool month_before(const Text& t, int64_t pos, int64_t endpos, int64_t* start, int* month) {
    for (int64_t i = pos; i < endpos; ++i) {
        if (is_alpha(t.at(i - 1))) continue;
        const Month* m = month_at(t, i, endpos);
        if (!m) continue;
        for (int f = 0; f < m->count; ++f) {
            const std::string_view form(m->forms[f]);
            if (!t.has(i, form, endpos)) continue;
            if (after_marks(t, i + form.size(), endpos,
                            [&](int64_t r) { return r < endpos && t.all_space(r, endpos); })) {
                *start = i;
                *month = m->number;
                return true;
            }
        }
    }
    return false;
}

// _DAY_YEAR.match at e: (?:st|nd|rd|th)?,?\s+(\d{4})(?![0-9]); the year's start or -1.
int64_t day_year(const Text& t, int64_t e) {
    for (int suffix = ordinal_suffix(t, e) ? 2 : 0; suffix >= 0; suffix -= 2) {
        const int64_t q = e + suffix;
        for (int comma = t.at(q) == ',' ? 1 : 0; comma >= 0; --comma) {
            const int64_t y = blank_year(t, q + comma);
            if (y >= 0) return y;
        }
    }
    return -1;
}

// _ISO.match at s: (\d{4})-([01]?\d)(?:-([0-3]?\d))?(?![A-Za-z0-9_])
bool match_iso(const Text& t, int64_t s, int64_t* end, int* month, int* day) {
    if (t.at(s + 4) != '-') return false;
    const int64_t p = s + 5;
    for (int mlen = 2; mlen >= 1; --mlen) {
        if (mlen == 2 ? !((t.at(p) == '0' || t.at(p) == '1') && is_digit(t.at(p + 1))) : !is_digit(t.at(p)))
            continue;
        const int64_t q = p + mlen;
        for (int dlen = 2; dlen >= 0; --dlen) {  // 0: no day
            if (dlen > 0) {
                if (t.at(q) != '-') continue;
                if (dlen == 2 ? !(t.at(q + 1) >= '0' && t.at(q + 1) <= '3' && is_digit(t.at(q + 2)))
                              : !is_digit(t.at(q + 1)))
                    continue;
            }
            const int64_t e = dlen > 0 ? q + 1 + dlen : q;
            if (is_word(t.at(e))) continue;
            *end = e;
            *month = parse_small(t, p, p + mlen);
            *day = dlen > 0 ? parse_small(t, q + 1, q + 1 + dlen) : -1;
            return true;
        }
    }
    return false;
}

// _VERSION_BEFORE.search(text, pos, endpos) is not None:
// (?:(?<![A-Za-z])(?:version|ver\.|release|Version|Release)\s*|(?<![A-Za-z])[A-Z][A-Za-z+#]*\s)$
bool version_before(const Text& t, int64_t pos, int64_t endpos) {
    static const std::string_view kWords[] = {"version", "ver.", "release", "Version", "Release"};
    for (int64_t i = pos; i < endpos; ++i) {
        if (is_alpha(t.at(i - 1))) continue;
        for (std::string_view w : kWords)
            if (t.has(i, w, endpos) && t.all_space(i + w.size(), endpos)) return true;
        // $ also matches before a newline that ends the text: "Release \n2.1"
        for (int64_t end = endpos; end >= endpos - 1 && end > i + 1; --end) {
            if (end < endpos && t.at(end) != '\n') break;
            if (!is_upper(t.at(i)) || !is_space(t.at(end - 1))) continue;
            int64_t j = i + 1;
            while (j < end - 1 && (is_alpha(t.at(j)) || t.at(j) == '+' || t.at(j) == '#')) ++j;
            if (j == end - 1) return true;
        }
    }
    return false;
}

// ---- what follows a number: _AFTER (IGNORECASE) ------------------------------------------
// (?:\s?(?P<scale>thousand|million|billion|trillion|bn)(?![A-Za-z])|(?P<short>[kKM])(?![A-Za-z]))?
// (?:[\s-]?(?P<unit>UNITS)(?![A-Za-z])|(?P<letter>[gmswvhcfx])(?![A-Za-z]))?

struct After {
    int64_t end;
    double scale = 0;  // 0: no scale word
    char short_scale = 0;
    int64_t unit_start = -1, unit_end = -1;
    char letter = 0;
};

// The units of _UNITS that ASCII can spell, each alternative's forms in the order tried.
// "per\s*cent" and "percentage\s+points?" have blanks inside and are matched apart.
const char* const kUnitForms[] = {
    "%", "percent", "\x01", "\x02", "kg", "mg", "lbs", "lb", "pounds", "pound", "tons", "ton", "tonnes",
    "tonne", "km", "cm", "mm", "mi", "miles", "mile", "feet", "ft", "inches", "inch", "meters", "meter",
    "metres", "metre", "kilometers", "kilometer", "kilometres", "kilometre", "gb", "mb", "kb", "tb", "pb",
    "ghz", "mhz", "hz", "kw", "mw", "kwh", "mah", "ms", "seconds", "second", "sec", "minutes", "minute",
    "min", "hrs", "hr", "hours", "hour", "days", "day", "weeks", "week", "months", "month", "years", "year",
    "decades", "decade", "century", "centuries", "degrees", "degree", "dollars", "dollar", "usd", "eur",
    "euros", "euro", "rmb", "yuan", "yen", "people", "persons", "person", "times"};

int64_t unit_end(const Text& t, int64_t q) {
    for (const char* form : kUnitForms) {
        int64_t e = -1;
        if (form[0] == '\x01') {  // per\s*cent
            if (t.has_ci(q, "per")) {
                const int64_t r = t.skip_space(q + 3);
                if (t.has_ci(r, "cent")) e = r + 4;
            }
        } else if (form[0] == '\x02') {  // percentage\s+points?
            if (t.has_ci(q, "percentage") && is_space(t.at(q + 10))) {
                const int64_t r = t.skip_space(q + 10);
                if (t.has_ci(r, "points") && !is_alpha(t.at(r + 6))) return r + 6;
                if (t.has_ci(r, "point")) e = r + 5;
            }
        } else if (t.has_ci(q, form)) {
            e = q + static_cast<int64_t>(std::char_traits<char>::length(form));
        }
        if (e >= 0 && !is_alpha(t.at(e))) return e;
    }
    return -1;
}

After after_number(const Text& t, int64_t e) {
    static const std::pair<std::string_view, double> kScales[] = {
        {"thousand", 1e3}, {"million", 1e6}, {"billion", 1e9}, {"trillion", 1e12}, {"bn", 1e9}};
    After a;
    int64_t p = e;
    const int64_t q = is_space(t.at(p)) ? p + 1 : p;  // \s?: a word cannot start at the blank itself
    for (const auto& [word, value] : kScales)
        if (t.has_ci(q, word) && !is_alpha(t.at(q + word.size()))) {
            a.scale = value;
            p = q + word.size();
            break;
        }
    if (a.scale == 0) {
        const char c = t.at(p);
        if ((c == 'k' || c == 'K' || c == 'm' || c == 'M') && !is_alpha(t.at(p + 1))) {
            a.short_scale = c;
            p += 1;
        }
    }
    const int64_t r = is_space(t.at(p)) || t.at(p) == '-' ? p + 1 : p;  // [\s-]?: "a 14-day supply"
    const int64_t u = unit_end(t, r);
    if (u >= 0) {
        a.unit_start = r;
        a.unit_end = u;
        p = u;
    } else {
        const char c = to_lower(t.at(p));
        if (c != '\0' && std::string_view("gmswvhcfx").find(c) != std::string_view::npos &&
            !is_alpha(t.at(p + 1))) {
            a.letter = t.at(p);
            p += 1;
        }
    }
    a.end = p;
    return a;
}

// _unit_norm then _UNITS_ALIAS.
std::string unit_norm(std::string u) {
    bool alpha = !u.empty();
    for (char& c : u) {
        c = to_lower(c);
        alpha = alpha && is_alpha(c);
    }
    if (!alpha) {  // blanks inside ("per  cent") fold to one space
        std::string folded;
        for (size_t i = 0; i < u.size(); ++i) {
            if (is_space(u[i])) {
                if (i == 0 || !is_space(u[i - 1])) folded += ' ';
            } else {
                folded += u[i];
            }
        }
        u = std::move(folded);
    }
    if (u == "percent" || u == "per cent" || u == "percentage point" || u == "percentage points" || u == "%")
        return "%";
    if (u == "centuries") return "century";
    if (u.size() > 3 && u.back() == 's' && u != "lbs" && u != "hrs" && u != "mos") u.pop_back();
    static const std::pair<std::string_view, std::string_view> kAlias[] = {
        {"dollar", "usd"}, {"euro", "eur"},       {"yuan", "cny"},   {"rmb", "cny"},    {"pound", "lb"},
        {"lb", "lb"},      {"lbs", "lb"},         {"kilometer", "km"}, {"kilometre", "km"}, {"meter", "m"},
        {"metre", "m"},    {"second", "s"},       {"sec", "s"},      {"minute", "min"}, {"hour", "h"},
        {"hr", "h"},       {"hrs", "h"},          {"day", "day"},    {"year", "year"},  {"month", "month"},
        {"week", "week"},  {"tonne", "ton"},      {"x", "times"},    {"person", "people"}, {"degree", "deg"},
        {"time", "times"}};
    for (const auto& [from, to] : kAlias)
        if (u == from) return std::string(to);
    return u;
}

// _fmt: integers without ".0", others to 6 significant digits.
std::string format_value(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e18)
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// \d{1,3}(?:,\d{3})+(?:\.\d+)? over the whole run
bool grouped_thousands(std::string_view run) {
    size_t i = 0;
    while (i < run.size() && is_digit(run[i])) ++i;
    if (i < 1 || i > 3) return false;
    int groups = 0;
    while (i < run.size() && run[i] == ',') {
        if (i + 4 > run.size() || !is_digit(run[i + 1]) || !is_digit(run[i + 2]) || !is_digit(run[i + 3]))
            return false;
        i += 4;
        ++groups;
    }
    if (groups == 0) return false;
    if (i == run.size()) return true;
    if (run[i] != '.' || i + 1 == run.size()) return false;
    for (++i; i < run.size(); ++i)
        if (!is_digit(run[i])) return false;
    return true;
}

std::string strip_space(std::string s) {
    size_t a = 0, b = s.size();
    while (a < b && is_space(s[a])) ++a;
    while (b > a && is_space(s[b - 1])) --b;
    return s.substr(a, b - a);
}

bool all_digits(std::string_view s) {
    for (char c : s)
        if (!is_digit(c)) return false;
    return !s.empty();
}

// _numeric: dates, versions and numbers from the digit runs.
void numbers(const Text& t, std::vector<Span>* taken, std::vector<KeyFact>* out) {
    const bool months = any_month(t);
    int64_t end_taken = -1;
    int64_t i = 0;
    while (i < t.n) {
        if (!is_digit(t.p[i])) {
            ++i;
            continue;
        }
        const int64_t s = i;
        int64_t m_end = s + 1;  // [0-9][0-9.,]*
        while (is_digit(t.at(m_end)) || t.at(m_end) == '.' || t.at(m_end) == ',') ++m_end;
        i = m_end;
        if (s < end_taken || (!taken->empty() && overlaps(*taken, s, m_end))) continue;
        int64_t e = m_end;
        while (e > s && (t.p[e - 1] == '.' || t.p[e - 1] == ',')) --e;  // rstrip(".,")
        std::string_view run(t.p + s, e - s);
        const char prev = s ? t.p[s - 1] : ' ';
        // ".5", "COVID-19"; not the "17" of "9:00-17:30", nor the "5" of "3-5"
        if (prev == '.' || (prev == '-' && s > 1 && is_alpha(t.p[s - 2]))) continue;
        if (is_word(prev)) {
            if ((prev == 'v' || prev == 'V') && (s < 2 || !is_word(t.p[s - 2])) &&
                run.find(',') == std::string_view::npos) {
                out->push_back({kFactVersion, t.slice(s - 1, e), std::string(run)});
                taken->push_back({s - 1, e});
            }
            continue;  // inside a word or a code ("A100")
        }
        if (run.find(',') != std::string_view::npos && !grouped_thousands(run)) {
            run = run.substr(0, run.find(','));  // "1,2" is a list, not a number
            e = s + static_cast<int64_t>(run.size());
        }
        const bool digits = all_digits(run);
        bool found = false;
        KeyFact fact;
        Span span;
        if (run.size() == 4 && digits && (run[0] == '1' || run[0] == '2')) {
            int64_t end;
            int month, day;
            if (match_iso(t, s, &end, &month, &day)) {
                fact = {kFactDate, t.slice(s, end), date_norm(run, month, day)};
                span = {s, end};
                found = true;
            }
        }
        if (!found && months && run.size() <= 2 && digits) {
            const char next = t.at(e);
            int64_t end, year;
            int day, month;
            if ((is_space(next) || next == 's' || next == 'n' || next == 'r' || next == 't') &&
                match_dmy(t, s, &end, &day, &month, &year)) {
                fact = {kFactDate, t.slice(s, end), date_norm(std::string_view(t.p + year, 4), month, day)};
                span = {s, end};
                found = true;
            } else if (is_space(prev)) {  // "March 3, 2021"
                int64_t start;
                if (month_before(t, std::max<int64_t>(0, s - 12), s, &start, &month)) {
                    year = day_year(t, e);
                    if (year >= 0) {
                        fact = {kFactDate, t.slice(start, year + 4),
                                date_norm(std::string_view(t.p + year, 4), month, parse_small(t, s, e))};
                        span = {start, year + 4};
                        found = true;
                    }
                }
            }
        }
        if (!found && std::count(run.begin(), run.end(), '.') >= 2) {
            fact = {kFactVersion, std::string(run), std::string(run)};
            span = {s, e};
            found = true;
        }
        if (!found) {
            const After after = after_number(t, e);
            const bool has_unit = after.end > e;
            int month;
            int64_t start;
            if (run.size() == 4 && digits && (run[0] == '1' || run[0] == '2') && parse_small(t, s, e) < 2100 &&
                (!has_unit || after.letter == 's')) {
                if (months && month_before(t, std::max<int64_t>(0, s - 12), s, &start, &month)) {
                    fact = {kFactDate, t.slice(start, e), date_norm(run, month, -1)};
                    span = {start, e};
                } else {
                    fact = {kFactDate, std::string(run), std::string(run)};
                    span = {s, e};
                }
            } else if (!has_unit && std::count(run.begin(), run.end(), '.') == 1 &&
                       version_before(t, std::max<int64_t>(0, s - 12), s)) {
                fact = {kFactVersion, std::string(run), std::string(run)};
                span = {s, e};
            } else {
                const bool dollar = prev == '$' || (s > 1 && prev == ' ' && t.p[s - 2] == '$');
                start = s - (prev == '$' ? 1 : dollar ? 2 : 0);
                std::string digits_only;
                for (char c : run)
                    if (c != ',') digits_only += c;
                double value = 0;
                std::from_chars(digits_only.data(), digits_only.data() + digits_only.size(), value);
                std::string unit = after.unit_start >= 0 ? t.slice(after.unit_start, after.unit_end) : "";
                if (after.scale != 0) {
                    value *= after.scale;
                } else if (after.short_scale) {
                    if ((after.short_scale == 'm' || after.short_scale == 'M') && !dollar && unit.empty())
                        unit = "m";  // "5m" is metres unless it is money
                    else
                        value *= to_lower(after.short_scale) == 'k' ? 1e3 : 1e6;
                }
                if (after.letter) unit = std::string(1, after.letter);
                std::string u = unit.empty() ? "" : unit_norm(unit);
                if (dollar) u = "usd";
                std::string norm = format_value(value);
                if (!u.empty()) norm += " " + u;
                fact = {kFactNumber, strip_space(t.slice(start, after.end)), std::move(norm)};
                span = {start, after.end};
            }
        }
        out->push_back(std::move(fact));
        taken->push_back(span);
        end_taken = span.second;
    }
}

// ---- entities: _CAP_SPAN ---------------------------------------------------------------------
// (?<![\w'])(?:CAPWORD\.?)(?:[ \t]+(?:CONNECTOR[ \t]+)*CAPWORD\.?)*
// CAPWORD = [A-Z][\w'\-]*(?:\.[A-Za-z][\w'\-]*)*. Everything after the first word is
// optional, so the greedy path is the match; a connector never starts a CAPWORD, so a
// repetition that finds no capitalised word after its connectors ends the span.

inline bool capword_char(char c) { return is_word(c) || c == '\'' || c == '-'; }

int64_t capword_end(const Text& t, int64_t q) {
    int64_t r = q + 1;
    while (capword_char(t.at(r))) ++r;
    while (t.at(r) == '.' && is_alpha(t.at(r + 1))) {
        r += 2;
        while (capword_char(t.at(r))) ++r;
    }
    return t.at(r) == '.' ? r + 1 : r;
}

int64_t connector_end(const Text& t, int64_t r) {
    static const std::string_view kConnectors[] = {"of", "de",  "del", "della", "der", "di",  "da",  "du", "des",
                                                   "la", "le",  "von", "van",   "y",   "&",   "for", "the"};
    for (std::string_view c : kConnectors)
        if (t.has(r, c, t.n) && is_blank(t.at(r + c.size()))) return r + c.size();
    return -1;
}

int64_t cap_span_end(const Text& t, int64_t p) {
    int64_t e = capword_end(t, p);
    while (is_blank(t.at(e))) {
        int64_t r = e;
        while (is_blank(t.at(r))) ++r;
        for (int64_t c = connector_end(t, r); c >= 0; c = connector_end(t, r)) {
            r = c;
            while (is_blank(t.at(r))) ++r;
        }
        if (!is_upper(t.at(r))) break;
        e = capword_end(t, r);
    }
    return e;
}

std::string lower_copy(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_lower(c);
    return out;
}

// _entity_norm: lower case, runs of other characters folded to one space, no leading "the".
std::string entity_norm(std::string_view raw) {
    std::string key;
    bool gap = false;
    for (char c : raw) {
        if (is_word(c)) {
            if (gap && !key.empty()) key += ' ';
            key += to_lower(c);
            gap = false;
        } else {
            gap = true;
        }
    }
    return key.compare(0, 4, "the ") == 0 ? key.substr(4) : key;
}

bool opens_sentence(const Text& t, int64_t pos) {
    int64_t i = pos - 1;
    while (i >= 0 && is_blank(t.p[i])) --i;
    if (i < 0) return true;
    const char c = t.p[i];
    return c == '.' || c == '!' || c == '?' || c == ':' || c == '\n' || c == '"' || c == '(';
}

void entities(const Text& t, const FactWords& words, const std::vector<Span>& taken,
              std::vector<KeyFact>* out) {
    std::unordered_set<std::string> seen;
    std::vector<std::string_view> parts;
    int64_t p = 0;
    while (p < t.n) {
        const char prev = t.at(p - 1);
        if (!is_upper(t.p[p]) || is_word(prev) || prev == '\'') {
            ++p;
            continue;
        }
        const int64_t s = p, e = cap_span_end(t, p);
        p = e;
        if (!taken.empty() && overlaps(taken, s, e)) continue;
        int64_t stop = e;  // rstrip(".-'")
        while (stop > s && (t.p[stop - 1] == '.' || t.p[stop - 1] == '-' || t.p[stop - 1] == '\'')) --stop;
        parts.clear();
        for (int64_t a = s; a < stop;) {  // split(): the span's blanks are spaces and tabs
            while (a < stop && is_blank(t.p[a])) ++a;
            int64_t b = a;
            while (b < stop && !is_blank(t.p[b])) ++b;
            if (b > a) parts.emplace_back(t.p + a, b - a);
            a = b;
        }
        while (!parts.empty() && words.common.count(lower_copy(parts.back()))) parts.pop_back();
        const bool opened = !parts.empty() && words.common.count(lower_copy(parts.front()));
        if (opened) parts.erase(parts.begin());  // "The Beatles" -> "Beatles"
        if (parts.empty()) continue;
        if (parts.size() == 1 && !opened) {
            const std::string_view w = parts[0];
            bool has_lower = false, upper_after_first = false;
            for (size_t k = 0; k < w.size(); ++k) {
                has_lower = has_lower || is_lower(w[k]);
                upper_after_first = upper_after_first || (k > 0 && is_upper(w[k]));
            }
            if (w.size() < 2 || (opens_sentence(t, s) && has_lower && !upper_after_first))
                continue;  // a lone capitalised word opening a sentence: probably just a word
        }
        std::string raw(parts[0]);
        for (size_t k = 1; k < parts.size(); ++k) {
            raw += ' ';
            raw += parts[k];
        }
        std::string norm = entity_norm(raw);
        if (norm.empty() || seen.count(norm) || words.common.count(norm)) continue;
        seen.insert(norm);
        out->push_back({kFactEntity, std::move(raw), std::move(norm)});
    }
}

// ---- written in words: _FREQUENCY, _UNBOUNDED, _WORD_AMOUNT (and _NUM_RE) ------------------------
// A word of these patterns is always followed by a blank, a hyphen or a lookahead that refuses a
// letter, so each is read as a whole run of letters and compared without case. Each optional part
// of _NUM_RE is greedy and no word of it can start what follows it, so the longest reading is the
// one the regular expression takes; the same holds for the count before "times".

int64_t letters_end(const Text& t, int64_t i) {
    while (is_alpha(t.at(i))) ++i;
    return i;
}

bool word_eq(const Text& t, int64_t a, int64_t b, std::string_view lower_w) {
    return b - a == static_cast<int64_t>(lower_w.size()) && t.has_ci(a, lower_w);
}

template <size_t N>
int word_index(const Text& t, int64_t a, int64_t b, const std::string_view (&words)[N]) {
    for (size_t k = 0; k < N; ++k)
        if (word_eq(t, a, b, words[k])) return static_cast<int>(k);
    return -1;
}

int64_t spaces(const Text& t, int64_t i) { return is_space(t.at(i)) ? t.skip_space(i) : -1; }  // \s+

int64_t next_word(const Text& t, int64_t i, std::string_view lower_w) {  // \s+word: its end, or -1
    const int64_t r = spaces(t, i);
    if (r < 0) return -1;
    const int64_t e = letters_end(t, r);
    return word_eq(t, r, e, lower_w) ? e : -1;
}

inline bool ends_word(const Text& t, int64_t i) { return !is_word(t.at(i)) && t.at(i) != '-'; }  // (?![\w-])

const std::string_view kSmall[] = {"zero",    "one",     "two",       "three",    "four",
                                   "five",    "six",     "seven",     "eight",    "nine",
                                   "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                   "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
const std::string_view kTens[] = {"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
const std::string_view kTimeUnits[] = {"seconds", "second", "secs", "sec",        "minutes",   "minute",
                                       "mins",    "min",    "hours", "hour",      "hrs",       "hr",
                                       "days",    "day",    "weeks", "week",      "fortnights", "fortnight",
                                       "months",  "month",  "years", "year",      "decades",   "decade",
                                       "century", "centuries"};
const std::string_view kMeasureUnits[] = {"percent",   "pounds",     "pound",      "tons",      "ton",
                                          "tonnes",    "tonne",      "miles",      "mile",      "feet",
                                          "inches",    "inch",       "meters",     "meter",     "metres",
                                          "metre",     "kilometers", "kilometer",  "kilometres", "kilometre",
                                          "degrees",   "degree",     "dollars",    "dollar",    "euros",
                                          "euro",      "yuan",       "yen"};
const std::string_view kAdverbs[] = {"daily",  "weekly",   "hourly",      "monthly",
                                     "yearly", "annually", "fortnightly", "nightly"};
const std::pair<double, std::string_view> kAdverbPeriods[] = {{1, "day"},  {1, "week"}, {1, "h"},    {1, "month"},
                                                              {1, "year"}, {1, "year"}, {2, "week"}, {1, "day"}};
// _DAY_PARTS: after "every" or "each", once a day
const std::string_view kDayParts[] = {"night", "morning", "evening", "afternoon"};
const std::string_view kAdverbNext[] = {"at", "in", "on", "from", "to", "and", "or", "but", "for", "until", "till",
                                        "since", "during", "with", "by", "except", "between", "before", "after",
                                        "around", "via", "through", "throughout", "starting", "beginning", "as",
                                        "if", "when", "while", "unless", "including", "basis"};
const std::string_view kRateUnits[] = {
    "percent", "cent", "points", "point", "kg", "mg", "lb", "lbs", "pound", "pounds", "ton", "tons", "tonne",
    "tonnes", "km", "cm", "mm", "mi", "mile", "miles", "feet", "ft", "inch", "inches", "meter", "meters", "metre",
    "metres", "kilometer", "kilometers", "kilometre", "kilometres", "gb", "mb", "kb", "tb", "pb", "ghz", "mhz",
    "hz", "kw", "mw", "kwh", "mah", "ms", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes",
    "hr", "hrs", "hour", "hours", "day", "days", "week", "weeks", "month", "months", "year", "years", "decade",
    "decades", "century", "centuries", "degree", "degrees", "dollar", "dollars", "usd", "eur", "euro", "euros",
    "rmb", "yuan", "yen", "people", "person", "persons", "times"};
const std::string_view kOneDayOpeners[] = {"and", "but", "until", "till", "that", "then", "when", "so", "if"};
const std::string_view kOneDaySpans[] = {"later", "earlier", "after", "before", "ago"};
const char kInfDuration[] = "inf duration";

// A cheap test before the patterns are tried at a word: whether some word that can open a match
// (_NUM_RE's first word, the count before "times", every, each, a, an, per, the adverbs, forever...)
// has the same first two letters and length. Most words fail it.
class StartWords {
  public:
    StartWords() {
        static const std::string_view kOpeners[] = {
            "half", "a", "an", "once", "twice", "thrice", "every", "each", "per", "daily", "weekly", "hourly",
            "monthly", "yearly", "annually", "fortnightly", "nightly", "forever", "indefinitely", "permanently", "for",
            "in", "never"};
        for (std::string_view w : kOpeners) add(w);
        for (std::string_view w : kSmall) add(w);
        for (std::string_view w : kTens) add(w);
    }
    bool may_open(const Text& t, int64_t a, int64_t b) const {
        const int64_t n = b - a;
        return n < 16 && bits_[key(to_lower(t.p[a]), n > 1 ? to_lower(t.p[a + 1]) : 0, n)];
    }

  private:
    static size_t key(char c0, char c1, int64_t n) {
        return (static_cast<size_t>(c0 - 'a') * 27 + (c1 ? c1 - 'a' + 1 : 0)) * 16 + static_cast<size_t>(n);
    }
    void add(std::string_view w) { bits_[key(w[0], w.size() > 1 ? w[1] : 0, static_cast<int64_t>(w.size()))] = true; }
    std::bitset<26 * 27 * 16> bits_;
};

const StartWords& start_words() {
    static const StartWords words;
    return words;
}

// _SMALL_RE at p: its end, or -1.
int64_t small_end(const Text& t, int64_t p) {
    const int64_t q = letters_end(t, p);
    if (word_index(t, p, q, kTens) >= 0) {
        if ((t.at(q) == ' ' || t.at(q) == '-') && is_alpha(t.at(q + 1))) {
            const int64_t r = letters_end(t, q + 1);
            const int k = word_index(t, q + 1, r, kSmall);
            if (k >= 1 && k <= 9) return r;
        }
        return q;
    }
    return word_index(t, p, q, kSmall) >= 0 ? q : -1;
}

// _NUM_RE at p: its end, or -1.
int64_t num_end(const Text& t, int64_t p) {
    const int64_t q = letters_end(t, p);
    if (word_eq(t, p, q, "half")) {  // half(?:\s+an?)?
        const int64_t r = spaces(t, q);
        if (r >= 0) {
            const int64_t s = letters_end(t, r);
            if (word_eq(t, r, s, "a") || word_eq(t, r, s, "an")) return s;
        }
        return q;
    }
    const bool article = word_eq(t, p, q, "a") || word_eq(t, p, q, "an");
    if (article) {  // an?\s+half
        const int64_t h = next_word(t, q, "half");
        if (h >= 0) return h;
    }
    int64_t e = article ? q : small_end(t, p);
    if (e < 0) return -1;
    if (const int64_t h = next_word(t, e, "hundred"); h >= 0) {  // (?:\s+hundred(?:\s+(?:and\s+)?SMALL)?)?
        e = h;
        const int64_t r = spaces(t, e);
        if (r >= 0) {
            int64_t inner = -1;
            const int64_t a = letters_end(t, r);
            if (word_eq(t, r, a, "and")) {
                const int64_t r2 = spaces(t, a);
                if (r2 >= 0) inner = small_end(t, r2);
            }
            if (inner < 0) inner = small_end(t, r);
            if (inner >= 0) e = inner;
        }
    }
    if (const int64_t d = next_word(t, e, "dozen"); d >= 0) e = d;
    for (std::string_view scale : {"thousand", "million", "billion"})
        if (const int64_t s = next_word(t, e, scale); s >= 0) {
            e = s;
            break;
        }
    if (const int64_t a = next_word(t, e, "and"); a >= 0)
        if (const int64_t b = next_word(t, a, "a"); b >= 0)
            if (const int64_t h = next_word(t, b, "half"); h >= 0) e = h;
    return e;
}

// _words_value: "a hundred and twenty" 120, "half an" 0.5, "two and a half" 2.5.
double words_value(const Text& t, int64_t a, int64_t b) {
    std::vector<std::string> toks;
    for (int64_t i = a; i < b;) {
        while (i < b && (is_space(t.p[i]) || t.p[i] == '-')) ++i;
        int64_t j = i;
        while (j < b && !(is_space(t.p[j]) || t.p[j] == '-')) ++j;
        if (j > i) toks.push_back(lower_copy(std::string_view(t.p + i, j - i)));
        i = j;
    }
    if (toks.empty()) return 0;
    if (toks[0] == "half" || (toks.size() > 1 && toks[1] == "half" && (toks[0] == "a" || toks[0] == "an")))
        return 0.5;
    const size_t m = toks.size();
    const bool half = m >= 3 && toks[m - 3] == "and" && toks[m - 2] == "a" && toks[m - 1] == "half";
    if (half) toks.resize(m - 3);
    double value = 0;
    for (const std::string& w : toks) {
        int k = -1;
        for (size_t i = 0; i < std::size(kSmall) && k < 0; ++i)
            if (w == kSmall[i]) k = static_cast<int>(i);
        for (size_t i = 0; i < std::size(kTens) && k < 0; ++i)
            if (w == kTens[i]) k = 20 + 10 * static_cast<int>(i);
        if (k >= 0)
            value += k;
        else if (w == "a" || w == "an")
            value += 1;
        else if (w == "hundred")
            value *= 100;
        else if (w == "dozen")
            value *= 12;
        else if (w == "thousand")
            value *= 1e3;
        else if (w == "million")
            value *= 1e6;
        else if (w == "billion")
            value *= 1e9;
    }
    return half ? value + 0.5 : value;
}

// _time_unit: a time unit's norm, and how many of it the word is ("fortnight": 2 weeks).
std::pair<double, std::string> time_unit(std::string_view word) {
    const std::string w = lower_copy(word);
    if (w.compare(0, 9, "fortnight") == 0) return {2, "week"};
    if (w == "annum") return {1, "year"};
    return {1, unit_norm(w)};
}

// _word_before: the run of letters, or the one character, before s (blanks skipped), lower case.
std::string word_before(const Text& t, int64_t s) {
    int64_t i = s;
    while (i > 0 && is_space(t.p[i - 1])) --i;
    int64_t j = i;
    while (j > 0 && is_alpha(t.p[j - 1])) --j;
    return j < i ? lower_copy(std::string_view(t.p + j, i - j)) : (i > 0 ? std::string(1, t.p[i - 1]) : "");
}

// _word_after: the run of letters, or the one character, after e (blanks skipped); *spaced when
// blanks came first.
std::string_view word_after(const Text& t, int64_t e, bool* spaced) {
    int64_t i = e;
    while (i < t.n && is_space(t.p[i])) ++i;
    int64_t j = i;
    while (j < t.n && is_alpha(t.p[j])) ++j;
    *spaced = i > e;
    return std::string_view(t.p + i, j > i ? j - i : (i < t.n ? 1 : 0));
}

template <size_t N>
bool among(std::string_view w, const std::string_view (&words)[N]) {
    for (std::string_view x : words)
        if (w == x) return true;
    return false;
}

bool is_rate(const Text& t, int64_t s) {  // _is_rate: "60 km an hour", "$5 per day"
    const std::string before = word_before(t, s);
    return !before.empty() &&
           (among(before, kRateUnits) || (before.size() == 1 && (is_digit(before[0]) || before[0] == '%' ||
                                                                 before[0] == '$')));
}

bool named(const Text& t, int64_t s, int64_t e) {  // _named: "Every Day", "the Daily Telegraph"
    bool first = true;
    for (int64_t i = s; i < e; ++i) {
        if (is_alpha(t.p[i]) && !is_alpha(t.at(i - 1))) {
            if (!first && is_upper(t.p[i])) return true;
            first = false;
        }
    }
    if (!is_upper(t.p[s])) return false;
    bool spaced;
    const std::string_view next = word_after(t, e, &spaced);
    return !opens_sentence(t, s) || (!next.empty() && is_upper(next[0]) && next != "I");
}

double parse_double(const Text& t, int64_t a, int64_t b) {
    double v = 0;
    std::from_chars(t.p + a, t.p + b, v);
    return v;
}

int64_t time_unit_end(const Text& t, int64_t r, bool annum) {  // (TIME_UNIT|annum)(?![\w-])
    const int64_t e = letters_end(t, r);
    const bool unit = word_index(t, r, e, kTimeUnits) >= 0 || (annum && word_eq(t, r, e, "annum"));
    return unit && ends_word(t, e) ? e : -1;
}

// _ANCHOR_WORDS: every match of the three patterns holds one of these as a whole run of letters;
// a text with none where a match could hold it (most) skips them. Looked up by first letter.
bool anchor_word(const Text& t, int64_t a, int64_t b) {
    static const std::vector<std::string_view> kByLetter[26] = {
        /*a*/ {"annum", "annually", "afternoon"},
        /*b*/ {},
        /*c*/ {"cent", "century", "centuries"},
        /*d*/ {"day", "days", "daily", "decade", "decades", "degree", "degrees", "dollar", "dollars"},
        /*e*/ {"ever", "euro", "euros", "expire", "expires", "expired", "evening"},
        /*f*/ {"feet", "forever", "fortnight", "fortnights", "fortnightly"},
        /*g*/ {},
        /*h*/ {"hr", "hrs", "hour", "hours", "hourly"},
        /*i*/ {"inch", "inches", "indefinitely"},
        /*j*/ {},
        /*k*/ {"kilometer", "kilometers", "kilometre", "kilometres"},
        /*l*/ {},
        /*m*/ {"min", "mins", "minute", "minutes", "month", "months", "monthly", "mile", "miles", "meter", "meters",
               "metre", "metres", "morning"},
        /*n*/ {"night", "nightly"},
        /*o*/ {},
        /*p*/ {"percent", "percentage", "pound", "pounds", "permanently", "perpetuity"},
        /*q*/ {},
        /*r*/ {},
        /*s*/ {"sec", "secs", "second", "seconds"},
        /*t*/ {"ton", "tons", "tonne", "tonnes"},
        /*u*/ {},
        /*v*/ {},
        /*w*/ {"week", "weeks", "weekly"},
        /*x*/ {},
        /*y*/ {"year", "years", "yearly", "yuan", "yen"},
        /*z*/ {}};
    if (b - a < 2 || b - a > 12) return false;
    for (std::string_view w : kByLetter[to_lower(t.p[a]) - 'a'])
        if (word_eq(t, a, b, w)) return true;
    return false;
}

// _anchor_words: whether a word of the list above stands where a match could hold it: after a
// run of letters that can come just before it (_BEFORE_UNIT, _BEFORE_WORD), or alone (_ALONE_WORDS).
bool any_anchor_word(const Text& t) {
    static const std::string_view kAlone[] = {"daily",    "weekly",      "hourly",  "monthly",      "yearly",
                                              "annually", "fortnightly", "nightly", "indefinitely", "permanently",
                                              "forever"};
    static const std::string_view kBeforeUnit[] = {
        "hundred", "dozen", "thousand", "million", "billion", "half", "a", "an", "every", "each", "other",
        "second", "per"};
    static const std::string_view kExpire[] = {"expire", "expires", "expired"};
    int64_t prev_a = -1, prev_b = -1;  // the run of letters before
    for (int64_t i = 0; i < t.n; ++i) {
        if (!is_alpha(t.p[i])) continue;
        const int64_t e = letters_end(t, i);
        if (anchor_word(t, i, e)) {
            bool before;
            if (word_index(t, i, e, kAlone) >= 0)
                return true;
            if (word_eq(t, i, e, "ever"))
                before = word_eq(t, prev_a, prev_b, "for");
            else if (word_eq(t, i, e, "perpetuity"))
                before = word_eq(t, prev_a, prev_b, "in");
            else if (word_index(t, i, e, kExpire) >= 0)
                before = word_eq(t, prev_a, prev_b, "never");
            else
                before = prev_a >= 0 && (word_index(t, prev_a, prev_b, kBeforeUnit) >= 0 ||
                                         word_index(t, prev_a, prev_b, kSmall) >= 0 ||
                                         word_index(t, prev_a, prev_b, kTens) >= 0);
            if (before) return true;
        }
        prev_a = i;
        prev_b = e;
        i = e;
    }
    return false;
}

// _FREQUENCY: "daily", "every 3 days", "twice a week", "per hour", "once every two weeks".
void frequencies(const Text& t, std::vector<Span>* taken, std::vector<KeyFact>* out) {
    int64_t p = 0;
    while (p < t.n) {
        const char c = t.p[p], prev = t.at(p - 1);
        if (!is_alnum(c) || is_word(prev) || prev == '-' || (is_digit(c) && (prev == '.' || prev == ','))) {
            ++p;
            continue;
        }
        // (?:(once|twice|thrice|(?:SMALL|\d+)\s+times)\s+)?
        int64_t q = p, k_end = -1, k_num = -1;
        double k = 1;
        if (is_digit(c)) {
            k_num = p;
            while (is_digit(t.at(k_num))) ++k_num;
            if ((k_end = next_word(t, k_num, "times")) >= 0) k = parse_double(t, p, k_num);
        } else {
            const int64_t w = letters_end(t, p);
            if (!start_words().may_open(t, p, w)) {
                p = w;
                continue;
            }
            static const std::string_view kOnce[] = {"once", "twice", "thrice"};
            const int once = word_index(t, p, w, kOnce);
            if (once >= 0) {
                k_end = w;
                k = once + 1;
            } else if ((k_num = small_end(t, p)) >= 0 && (k_end = next_word(t, k_num, "times")) >= 0) {
                k = words_value(t, p, k_num);
            }
        }
        const bool has_k = k_end >= 0;
        if (has_k) {
            q = spaces(t, k_end);
            if (q < 0) {
                ++p;
                continue;
            }
        }
        if (!is_alpha(t.at(q))) {
            ++p;
            continue;
        }
        const int64_t we = letters_end(t, q);
        int64_t e = -1, unit_start = -1;
        double n = 1;
        bool per = false, per_word = false, day_part = false;
        int adverb = -1;
        if (word_eq(t, q, we, "every") || word_eq(t, q, we, "each")) {
            const int64_t r = spaces(t, we);
            if (r >= 0) {
                const int64_t rw = letters_end(t, r);
                if (word_eq(t, r, rw, "other") || word_eq(t, r, rw, "second")) {  // (other|second)\s+(?=UNIT)
                    const int64_t r2 = spaces(t, rw);
                    if (r2 >= 0 && (e = time_unit_end(t, r2, false)) >= 0) {
                        unit_start = r2;
                        n = 2;
                    }
                }
                if (e < 0) {  // (\d+(?:\.\d+)?|NUM)\s+
                    int64_t ne = -1;
                    bool digits = false;
                    if (is_digit(t.at(r))) {
                        ne = r;
                        while (is_digit(t.at(ne))) ++ne;
                        if (t.at(ne) == '.' && is_digit(t.at(ne + 1))) {
                            ne += 2;
                            while (is_digit(t.at(ne))) ++ne;
                        }
                        digits = true;
                    } else {
                        ne = num_end(t, r);
                    }
                    const int64_t r2 = ne >= 0 ? spaces(t, ne) : -1;
                    if (r2 >= 0 && (e = time_unit_end(t, r2, false)) >= 0) {
                        unit_start = r2;
                        n = digits ? parse_double(t, r, ne) : words_value(t, r, ne);
                    }
                }
                if (e < 0 && (e = time_unit_end(t, r, false)) >= 0) unit_start = r;
                if (e < 0) {  // (?:every|each)\s+(night|morning|evening|afternoon)
                    const int64_t rw = letters_end(t, r);
                    if (word_index(t, r, rw, kDayParts) >= 0 && ends_word(t, rw)) {
                        e = rw;
                        day_part = true;
                    }
                }
            }
        } else if (word_eq(t, q, we, "a") || word_eq(t, q, we, "an") || word_eq(t, q, we, "per")) {
            const int64_t r = spaces(t, we);
            if (r >= 0 && (e = time_unit_end(t, r, true)) >= 0) {
                unit_start = r;
                per = true;
                per_word = word_eq(t, q, we, "per");
            }
        } else if ((adverb = word_index(t, q, we, kAdverbs)) >= 0 && ends_word(t, we)) {
            e = we;
        }
        if (e < 0) {
            ++p;
            continue;
        }
        const int64_t s = p;
        p = e;
        if ((!taken->empty() && overlaps(*taken, s, e)) || named(t, s, e)) continue;
        if (per && !has_k && (!per_word || is_rate(t, s))) continue;  // "a day" alone: a duration
        if (adverb >= 0 && !has_k) {
            bool spaced;
            const std::string_view next = word_after(t, e, &spaced);
            const bool ok = next.empty() || (next.size() == 1 && std::string_view(".,;:!?)]\"'").find(next[0]) !=
                                                                     std::string_view::npos) ||
                            (spaced && among(lower_copy(next), kAdverbNext));
            if (!ok) continue;  // "daily life"
        }
        if (k == 0) continue;
        std::string u;
        if (adverb >= 0) {
            n = kAdverbPeriods[adverb].first;
            u = kAdverbPeriods[adverb].second;
        } else if (day_part) {
            n = 1;
            u = "day";
        } else {
            const auto [factor, unit] = time_unit(std::string_view(t.p + unit_start, e - unit_start));
            n *= factor;
            u = unit;
        }
        out->push_back({kFactNumber, t.slice(s, e), "every " + format_value(n / k) + " " + u});
        taken->push_back({s, e});
    }
}

// _UNBOUNDED: "forever", "for ever", "indefinitely", "permanently", "in perpetuity", "never expire(s|d)".
void unbounded(const Text& t, std::vector<Span>* taken, std::vector<KeyFact>* out) {
    static const std::string_view kOne[] = {"forever", "indefinitely", "permanently"};
    static const std::string_view kExpire[] = {"expire", "expires", "expired"};
    int64_t p = 0;
    while (p < t.n) {
        const char prev = t.at(p - 1);
        if (!is_alpha(t.p[p]) || is_word(prev) || prev == '-') {
            ++p;
            continue;
        }
        const int64_t w = letters_end(t, p);
        int64_t e = -1;
        if (!start_words().may_open(t, p, w)) {
            p = w;
            continue;
        }
        if (word_index(t, p, w, kOne) >= 0) {
            e = w;
        } else if (word_eq(t, p, w, "for")) {
            e = next_word(t, w, "ever");
        } else if (word_eq(t, p, w, "in")) {
            e = next_word(t, w, "perpetuity");
        } else if (word_eq(t, p, w, "never")) {
            const int64_t r = spaces(t, w);
            const int64_t x = r >= 0 ? letters_end(t, r) : -1;
            if (r >= 0 && word_index(t, r, x, kExpire) >= 0) e = x;
        }
        if (e < 0 || !ends_word(t, e)) {
            p = w;
            continue;
        }
        const int64_t s = p;
        p = e;
        if ((!taken->empty() && overlaps(*taken, s, e)) || named(t, s, e)) continue;
        out->push_back({kFactNumber, t.slice(s, e), kInfDuration});
        taken->push_back({s, e});
    }
}

// The unit of _WORD_AMOUNT at r: a time or measure unit, "per cent", "percentage point(s)"; its end or -1.
int64_t amount_unit_end(const Text& t, int64_t r, bool* time) {
    const int64_t e = letters_end(t, r);
    *time = word_index(t, r, e, kTimeUnits) >= 0;
    if (*time || word_index(t, r, e, kMeasureUnits) >= 0) return e;
    if (word_eq(t, r, e, "per")) {  // per\s*cent
        const int64_t c = t.skip_space(e), ce = letters_end(t, c);
        return word_eq(t, c, ce, "cent") ? ce : -1;
    }
    if (word_eq(t, r, e, "percentage")) {  // percentage\s+points?
        const int64_t c = spaces(t, e);
        if (c < 0) return -1;
        const int64_t ce = letters_end(t, c);
        return word_eq(t, c, ce, "point") || word_eq(t, c, ce, "points") ? ce : -1;
    }
    return -1;
}

// _WORD_AMOUNT: "fourteen days", "half an hour", "a fortnight", "five percent".
void amounts(const Text& t, std::vector<Span>* taken, std::vector<KeyFact>* out) {
    int64_t p = 0;
    while (p < t.n) {
        const char prev = t.at(p - 1);
        if (!is_alpha(t.p[p]) || is_word(prev) || prev == '-') {
            ++p;
            continue;
        }
        const int64_t w = letters_end(t, p);
        if (!start_words().may_open(t, p, w)) {
            p = w;
            continue;
        }
        const int64_t ne = num_end(t, p);
        int64_t r = -1, ue = -1, e = -1;
        bool time = false, half = false;
        if (ne >= 0) r = is_space(t.at(ne)) ? t.skip_space(ne) : t.at(ne) == '-' ? ne + 1 : -1;  // (?:\s+|-)
        if (r >= 0) ue = amount_unit_end(t, r, &time);
        if (ue >= 0) {  // (\s+and\s+a\s+half)?(?!\w)
            int64_t h = next_word(t, ue, "and");
            h = h >= 0 ? next_word(t, h, "a") : -1;
            h = h >= 0 ? next_word(t, h, "half") : -1;
            if (h >= 0 && !is_word(t.at(h))) {
                e = h;
                half = true;
            } else if (!is_word(t.at(ue))) {
                e = ue;
            }
        }
        if (e < 0) {
            ++p;
            continue;
        }
        const int64_t s = p;
        p = e;
        if ((!taken->empty() && overlaps(*taken, s, e)) || named(t, s, e)) continue;
        const std::string num = lower_copy(std::string_view(t.p + s, ne - s));
        const std::string unit = lower_copy(std::string_view(t.p + r, ue - r));
        const bool second = unit == "second" || unit == "sec";
        if ((num == "a" || num == "an") && (!time || second || is_rate(t, s))) continue;  // "$5 a day"
        double value = words_value(t, s, ne);
        if (second && value != 1) continue;  // "the twenty-second day"
        if (num == "one" && unit == "day" && !half) {  // "One day, he left"; "until one day"
            bool spaced;
            const std::string next = lower_copy(word_after(t, e, &spaced));
            const std::string before = word_before(t, s);
            if (!among(next, kOneDaySpans) &&
                (before.empty() || (before.size() == 1 && std::string_view(".!?,;:(\"\n").find(before[0]) !=
                                                              std::string_view::npos) ||
                 among(before, kOneDayOpeners)))
                continue;
        }
        if (t.has_ci(e, "-to-") || t.has_ci(e, "-by-") || t.has_ci(e, "-on-") || t.has_ci(e, "-round"))
            continue;  // "day-to-day", "year-round"
        if (half) value += 0.5;
        std::string u;
        if (time) {
            const auto [factor, tu] = time_unit(unit);
            value *= factor;
            u = tu;
        } else {
            u = unit_norm(unit);
        }
        out->push_back({kFactNumber, t.slice(s, e), format_value(value) + " " + u});
        taken->push_back({s, e});
    }
}

}  // namespace

bool key_facts_ascii(const char* text, int64_t n, const FactWords& words, std::vector<KeyFact>* out) {
    int64_t digit_run = 0;
    for (int64_t i = 0; i < n; ++i) {
        const char c = text[i];
        if (static_cast<unsigned char>(c) >= 0x80) return false;
        digit_run = (is_digit(c) || (digit_run && (c == '.' || c == ','))) ? digit_run + 1 : 0;
        if (digit_run > kMaxDigitRun) return false;
    }
    const Text t{text, n};
    std::vector<Span> taken;
    std::vector<KeyFact> found;
    codes(t, &taken, &found);
    if (any_anchor_word(t)) {  // _words: before the digit runs, so "every 3 days" is one fact
        frequencies(t, &taken, &found);
        unbounded(t, &taken, &found);
        amounts(t, &taken, &found);
    }
    numbers(t, &taken, &found);
    entities(t, words, taken, &found);
    for (KeyFact& f : found) out->push_back(std::move(f));
    return true;
}

}  // namespace asmr
