// Key facts of ASCII text: a port of asmr.text.facts (_codes, _numeric,
// _entities). Each regular expression there is matched here by hand, trying its
// alternatives in the order Python's backtracking engine tries them; comments
// name the pattern each function stands for.
#include "asmr/key_facts.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
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
// (?:\s?(?P<unit>UNITS)(?![A-Za-z])|(?P<letter>[gmswvhcfx])(?![A-Za-z]))?

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
    const int64_t r = is_space(t.at(p)) ? p + 1 : p;
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
        if (prev == '.' || (prev == '-' && s > 1 && is_word(t.p[s - 2]))) continue;  // ".5", "COVID-19"
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
    numbers(t, &taken, &found);
    entities(t, words, taken, &found);
    for (KeyFact& f : found) out->push_back(std::move(f));
    return true;
}

}  // namespace asmr
