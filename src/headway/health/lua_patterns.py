"""Lua pattern matching that a health script's budget can stop.

LuaJIT matches patterns in C, where no hook runs: `string.find(s, ".-.-.-.-b")` on a few
thousand bytes backtracks for hours, and nothing in the interpreter can interrupt it. So the
sandbox's `string.find`, `match`, `gmatch` and `gsub` first bound the C matcher's work from
the subject's length and the pattern's repetition items (each `*`, `+`, `-` can try every
position, each `?` two; see `c_work`). Work under `C_WORK_LIMIT` steps runs in C and is
charged to the budget up front; anything costlier runs in the pure-Lua matcher below, one
interpreted step at a time, where the budget's count hook sees every step.

The matcher implements Lua 5.1's pattern language as LuaJIT does (classes `%a %c %d %l %p %s
%u %w %x %z` and their complements, sets, `%b`, `%f`, back-references, position captures,
anchors) and is tested against LuaJIT's own C matcher case by case.

`SOURCE` is a Lua chunk returning `{guarded_string = function(charge, c_limit), find = ...,
match = ..., gmatch = ..., gsub = ...}`; the last four are the pure-Lua functions.
"""

from __future__ import annotations

__all__ = ["C_WORK_LIMIT", "SOURCE"]

# Steps of C matching trusted without interpretation (well under a millisecond).
C_WORK_LIMIT = 100_000

SOURCE = r"""
local byte, sub, format = string.byte, string.sub, string.format
local error, type, tostring, tonumber, unpack = error, type, tostring, tonumber, unpack
local c_find, c_match, c_gmatch = string.find, string.match, string.gmatch
local c_gsub, c_rep = string.gsub, string.rep
local CAP_UNFINISHED, CAP_POSITION = -1, -2
local PERCENT, LBRACKET, RBRACKET, CARET, DOLLAR = 37, 91, 93, 94, 36
local SPECIALS = "[%^%$%*%+%?%.%(%[%%%-]"

local function is_digit(c) return c ~= nil and c >= 48 and c <= 57 end

local function class_matches(c, class)
  local lower = (class >= 65 and class <= 90) and class + 32 or class
  local yes
  if lower == 97 then yes = (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
  elseif lower == 99 then yes = c < 32 or c == 127
  elseif lower == 100 then yes = c >= 48 and c <= 57
  elseif lower == 108 then yes = c >= 97 and c <= 122
  elseif lower == 112 then
    yes = (c >= 33 and c <= 47) or (c >= 58 and c <= 64) or (c >= 91 and c <= 96)
      or (c >= 123 and c <= 126)
  elseif lower == 115 then yes = c == 32 or (c >= 9 and c <= 13)
  elseif lower == 117 then yes = c >= 65 and c <= 90
  elseif lower == 119 then
    yes = (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
  elseif lower == 120 then
    yes = (c >= 48 and c <= 57) or (c >= 65 and c <= 70) or (c >= 97 and c <= 102)
  elseif lower == 122 then yes = c == 0
  else return class == c end
  if lower ~= class then return not yes end
  return yes
end

-- p is at '[', last at the closing ']'
local function set_matches(c, pat, p, last)
  local wanted = true
  if byte(pat, p + 1) == CARET then wanted = false p = p + 1 end
  p = p + 1
  while p < last do
    local pc = byte(pat, p)
    if pc == PERCENT then
      p = p + 1
      if class_matches(c, byte(pat, p)) then return wanted end
    elseif byte(pat, p + 1) == 45 and p + 2 < last then
      p = p + 2
      if byte(pat, p - 2) <= c and c <= byte(pat, p) then return wanted end
    elseif pc == c then
      return wanted
    end
    p = p + 1
  end
  return not wanted
end

local function class_end(ms, p)
  local pat, last = ms.pat, ms.plen
  local c = byte(pat, p)
  p = p + 1
  if c == PERCENT then
    if p > last then error("malformed pattern (ends with '%')", 0) end
    return p + 1
  elseif c == LBRACKET then
    if byte(pat, p) == CARET then p = p + 1 end
    repeat
      if p > last then error("malformed pattern (missing ']')", 0) end
      local cc = byte(pat, p)
      p = p + 1
      if cc == PERCENT and p <= last then p = p + 1 end
    until byte(pat, p) == RBRACKET
    return p + 1
  end
  return p
end

local function single_matches(ms, s, p, ep)
  if s > ms.len then return false end
  local c, pc = byte(ms.src, s), byte(ms.pat, p)
  if pc == 46 then return true end
  if pc == PERCENT then return class_matches(c, byte(ms.pat, p + 1)) end
  if pc == LBRACKET then return set_matches(c, ms.pat, p, ep - 1) end
  return pc == c
end

local do_match

local function max_expand(ms, s, p, ep)
  local i = 0
  while single_matches(ms, s + i, p, ep) do i = i + 1 end
  while i >= 0 do
    local e = do_match(ms, s + i, ep + 1)
    if e then return e end
    i = i - 1
  end
  return nil
end

local function min_expand(ms, s, p, ep)
  while true do
    local e = do_match(ms, s, ep + 1)
    if e then return e end
    if not single_matches(ms, s, p, ep) then return nil end
    s = s + 1
  end
end

local function start_capture(ms, s, p, what)
  local level = ms.level + 1
  ms.cstart[level], ms.clen[level], ms.level = s, what, level
  local e = do_match(ms, s, p)
  if e == nil then ms.level = ms.level - 1 end
  return e
end

local function end_capture(ms, s, p)
  local level = ms.level
  while level > 0 and ms.clen[level] ~= CAP_UNFINISHED do level = level - 1 end
  if level == 0 then error("invalid pattern capture", 0) end
  ms.clen[level] = s - ms.cstart[level]
  local e = do_match(ms, s, p)
  if e == nil then ms.clen[level] = CAP_UNFINISHED end
  return e
end

local function match_balance(ms, s, p)
  local open, close = byte(ms.pat, p), byte(ms.pat, p + 1)
  if close == nil then error("malformed pattern (missing arguments to '%b')", 0) end
  if s > ms.len or byte(ms.src, s) ~= open then return nil end
  local depth = 1
  for i = s + 1, ms.len do
    local c = byte(ms.src, i)
    if c == close then
      depth = depth - 1
      if depth == 0 then return i + 1 end
    elseif c == open then
      depth = depth + 1
    end
  end
  return nil
end

local function match_back_reference(ms, s, digit)
  local level = digit - 48
  if level < 1 or level > ms.level or ms.clen[level] == CAP_UNFINISHED then
    error("invalid capture index", 0)
  end
  local start, length = ms.cstart[level], ms.clen[level]
  if length < 0 then return nil end  -- a position capture never matches text, as in C
  local here = sub(ms.src, s, s + length - 1)
  if ms.len - s + 1 >= length and here == sub(ms.src, start, start + length - 1) then
    return s + length
  end
  return nil
end

do_match = function(ms, s, p)
  local pat = ms.pat
  while true do
    if p > ms.plen then return s end
    local pc, next_pc = byte(pat, p), byte(pat, p + 1)
    if pc == 40 then
      if next_pc == 41 then return start_capture(ms, s, p + 2, CAP_POSITION) end
      return start_capture(ms, s, p + 1, CAP_UNFINISHED)
    elseif pc == 41 then
      return end_capture(ms, s, p + 1)
    elseif pc == DOLLAR and p == ms.plen then
      return s == ms.len + 1 and s or nil
    elseif pc == PERCENT and next_pc == 98 then
      s = match_balance(ms, s, p + 2)
      if s == nil then return nil end
      p = p + 4
    elseif pc == PERCENT and next_pc == 102 then
      p = p + 2
      if byte(pat, p) ~= LBRACKET then error("missing '[' after '%f' in pattern", 0) end
      local ep = class_end(ms, p)
      local before = s == 1 and 0 or byte(ms.src, s - 1)
      local here = s <= ms.len and byte(ms.src, s) or 0
      if set_matches(before, pat, p, ep - 1) or not set_matches(here, pat, p, ep - 1) then
        return nil
      end
      p = ep
    elseif pc == PERCENT and is_digit(next_pc) then
      s = match_back_reference(ms, s, next_pc)
      if s == nil then return nil end
      p = p + 2
    else
      local ep = class_end(ms, p)
      local matched = single_matches(ms, s, p, ep)
      local quantifier = byte(pat, ep)
      if quantifier == 63 then
        if matched then
          local e = do_match(ms, s + 1, ep + 1)
          if e then return e end
        end
        p = ep + 1
      elseif quantifier == 42 then
        return max_expand(ms, s, p, ep)
      elseif quantifier == 43 then
        if not matched then return nil end
        return max_expand(ms, s + 1, p, ep)
      elseif quantifier == 45 then
        return min_expand(ms, s, p, ep)
      else
        if not matched then return nil end
        s, p = s + 1, ep
      end
    end
  end
end

local function new_state(src, pat)
  return {src = src, len = #src, pat = pat, plen = #pat, level = 0, cstart = {}, clen = {}}
end

local function capture(ms, i, s, e)
  if i > ms.level then
    if i == 1 then return sub(ms.src, s, e - 1) end
    error("invalid capture index", 0)
  end
  local length = ms.clen[i]
  if length == CAP_UNFINISHED then error("unfinished capture", 0) end
  if length == CAP_POSITION then return ms.cstart[i] end
  return sub(ms.src, ms.cstart[i], ms.cstart[i] + length - 1)
end

local function captures(ms, s, e, whole)
  local n = (ms.level == 0 and whole) and 1 or ms.level
  local values = {}
  for i = 1, n do values[i] = capture(ms, i, s, e) end
  return unpack(values, 1, n)
end

local function check_args(name, src, pat)
  if type(src) == "number" then src = tostring(src) end
  if type(pat) == "number" then pat = tostring(pat) end
  for position = 1, 2 do
    local value = position == 1 and src or pat
    if type(value) ~= "string" then
      local problem = "bad argument #%d to '%s' (string expected, got %s)"
      error(format(problem, position, name, type(value)), 0)
    end
  end
  return src, pat
end

local function start_position(init, len)
  init = tonumber(init) or 1
  init = init - init % 1
  if init < 0 then init = init + len + 1 end
  if init < 1 then init = 1 end
  if init > len + 1 then init = len + 1 end
  return init
end

local function plain_find(src, pat, init)
  local m = #pat
  for s = init, #src - m + 1 do
    if sub(src, s, s + m - 1) == pat then return s, s + m - 1 end
  end
  return nil
end

local function find_aux(name, src, pat, init, plain, is_find)
  src, pat = check_args(name, src, pat)
  init = start_position(init, #src)
  if is_find and (plain or not c_find(pat, SPECIALS)) then return plain_find(src, pat, init) end
  local anchored = byte(pat, 1) == CARET
  local p = anchored and 2 or 1
  local s = init
  repeat
    local ms = new_state(src, pat)
    local e = do_match(ms, s, p)
    if e then
      if is_find then return s, e - 1, captures(ms, nil, 0, false) end
      return captures(ms, s, e, true)
    end
    s = s + 1
  until anchored or s > #src + 1
  return nil
end

local function lua_find(src, pat, init, plain)
  return find_aux("find", src, pat, init, plain, true)
end
local function lua_match(src, pat, init) return find_aux("match", src, pat, init, false, false) end

local function lua_gmatch(src, pat)
  src, pat = check_args("gmatch", src, pat)
  local position = 1
  return function()
    for s = position, #src + 1 do
      local ms = new_state(src, pat)
      local e = do_match(ms, s, 1)
      if e then
        position = e == s and e + 1 or e
        return captures(ms, s, e, true)
      end
    end
    position = #src + 2
    return nil
  end
end

local function add_replacement(ms, s, e, repl, out)
  local kind = type(repl)
  local value
  if kind == "string" or kind == "number" then
    repl = tostring(repl)
    local i, n = 1, #repl
    while i <= n do
      local c = byte(repl, i)
      if c == PERCENT and i < n then
        i = i + 1
        local d = byte(repl, i)
        if d == 48 then out[#out + 1] = sub(ms.src, s, e - 1)
        elseif is_digit(d) then out[#out + 1] = tostring(capture(ms, d - 48, s, e))
        else out[#out + 1] = sub(repl, i, i) end
      else
        out[#out + 1] = sub(repl, i, i)
      end
      i = i + 1
    end
    return
  elseif kind == "function" then
    value = repl(captures(ms, s, e, true))
  else
    value = repl[capture(ms, 1, s, e)]
  end
  if not value then
    value = sub(ms.src, s, e - 1)
  elseif type(value) ~= "string" and type(value) ~= "number" then
    error("invalid replacement value (a " .. type(value) .. ")", 0)
  end
  out[#out + 1] = tostring(value)
end

local function lua_gsub(src, pat, repl, max_n)
  src, pat = check_args("gsub", src, pat)
  local kind = type(repl)
  if kind ~= "string" and kind ~= "number" and kind ~= "function" and kind ~= "table" then
    error("bad argument #3 to 'gsub' (string/function/table expected)", 2)
  end
  max_n = tonumber(max_n) or #src + 1
  local anchored = byte(pat, 1) == CARET
  local p = anchored and 2 or 1
  local out, s, n = {}, 1, 0
  while n < max_n do
    local ms = new_state(src, pat)
    local e = do_match(ms, s, p)
    if e then
      n = n + 1
      add_replacement(ms, s, e, repl, out)
    end
    if e and e > s then
      s = e
    elseif s <= #src then
      out[#out + 1] = sub(src, s, s)
      s = s + 1
    else
      break
    end
    if anchored then break end
  end
  out[#out + 1] = sub(src, s)
  return table.concat(out), n
end

-- An upper bound on the C matcher's steps: every start position (one when anchored) times
-- every way the repetition items can split the subject, times the cost of one attempt.
local function pattern_shape(pat)
  local repeats, optionals, scans = 0, 0, 1
  for i = 1, #pat do
    local c = byte(pat, i)
    if c == 42 or c == 43 or c == 45 then repeats = repeats + 1
    elseif c == 63 then optionals = optionals + 1
    elseif c == PERCENT then scans = scans + 1 end
  end
  return {repeats = repeats, paths = 2 ^ optionals, scans = scans,
          anchored = byte(pat, 1) == CARET, literal = not c_find(pat, SPECIALS)}
end

local function c_work(n, pat, starts_anywhere, shape)
  shape = shape or pattern_shape(pat)
  local starts = (starts_anywhere or not shape.anchored) and n + 1 or 1
  local attempt = #pat + (shape.repeats + shape.scans) * (n + 1)
  return starts * (n + 1) ^ shape.repeats * shape.paths * attempt
end

local function guarded_string(charge, c_limit)
  local library = {}
  for name, value in pairs(string) do library[name] = value end
  library.dump = nil
  local shapes = {}  -- per run: scripts reuse a handful of patterns
  local function shape_of(pat)
    local shape = shapes[pat]
    if shape == nil then
      shape = pattern_shape(pat)
      shapes[pat] = shape
    end
    return shape
  end
  local function cheap_enough(src, pat, starts_anywhere)
    if type(src) ~= "string" or type(pat) ~= "string" then return true end
    local work = c_work(#src, pat, starts_anywhere, shape_of(pat))
    if work > c_limit then return false end
    charge(work)
    return true
  end
  library.find = function(src, pat, init, plain)
    local strings = type(src) == "string" and type(pat) == "string"
    if strings and (plain or shape_of(pat).literal) then
      charge(#src * #pat / 8)
      return c_find(src, pat, init, plain)
    end
    if cheap_enough(src, pat, false) then return c_find(src, pat, init, plain) end
    return lua_find(src, pat, init, plain)
  end
  library.match = function(src, pat, init)
    if cheap_enough(src, pat, false) then return c_match(src, pat, init) end
    return lua_match(src, pat, init)
  end
  library.gmatch = function(src, pat)
    if cheap_enough(src, pat, true) then return c_gmatch(src, pat) end
    return lua_gmatch(src, pat)
  end
  library.gsub = function(src, pat, repl, max_n)
    if cheap_enough(src, pat, false) then return c_gsub(src, pat, repl, max_n) end
    return lua_gsub(src, pat, repl, max_n)
  end
  library.rep = function(s, n, sep)
    local count = tonumber(n)
    if type(s) == "string" and count and count > 0 then
      charge((#s + (type(sep) == "string" and #sep or 0)) * count / 8)
    end
    return c_rep(s, n, sep)
  end
  return library
end

return {guarded_string = guarded_string, find = lua_find, match = lua_match,
        gmatch = lua_gmatch, gsub = lua_gsub, c_work = c_work}
"""
