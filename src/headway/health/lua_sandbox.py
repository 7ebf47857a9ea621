"""The Lua side of the health-script sandbox: budget, environment and result extraction.

`PRELUDE` runs once in every fresh LuaJIT interpreter, before any script. It keeps private
references to what it needs, switches the JIT compiler off (compiled traces skip count hooks)
and returns the one function Python calls:
`run(source, obj, open_libs, now, limit, cpu_limit, c_limit)`.

Why each piece is where it is:

* The budget is a count hook. LuaJIT keeps one hook for all coroutines, so a loop inside a
  coroutine is counted like any other. Once the budget is spent every further instruction
  fails, so a script's own `pcall` cannot swallow the stop.
* The hook also reads the CPU clock, and fires far more often once the run has grown the
  interpreter's memory by some MiB: a single instruction on a string of megabytes (`s .. s`)
  costs milliseconds, which an instruction count alone would not see.
* Library functions that work in C for longer than their arguments' size suggests (pattern
  matching, `string.rep`, `table.sort`, `table.concat`) are wrapped: they charge the budget
  for their work before they run, and patterns too costly to trust to C are matched by the
  pure-Lua matcher of `lua_patterns`, which the hook counts (see that module).
* The script's result and error are reduced to plain strings inside the budget, with raw
  table reads only: no metamethod of the script's (`__index`, `__tostring`, `__eq`) ever runs
  outside it. Python only sees `kind, status, message` strings.
"""

from __future__ import annotations

__all__ = ["BUDGET_EXCEEDED", "PRELUDE"]

BUDGET_EXCEEDED = "health script exceeded its budget"

PRELUDE = r"""
local patterns = ...
if jit then jit.off() jit.flush() end
local sethook, clock, gcount = debug.sethook, os.clock, collectgarbage
local loadstring, setfenv, pcall, error, type = loadstring, setfenv, pcall, error, type
local rawget, pairs, ipairs, tostring, tonumber = rawget, pairs, ipairs, tostring, tonumber
local floor, log, c_date, getmetatable = math.floor, math.log, os.date, debug.getmetatable
local sub, format, next = string.sub, string.format, next
local EXCEEDED = "health script exceeded its budget"
local GROWN_MEMORY_KB = 4096
local QUIET_EVERY, BUSY_EVERY = 1000, 10

local budget = {used = 0, limit = 0, started = 0, cpu = 0, every = QUIET_EVERY, memory = 0}

local function fail_from_now_on()
  sethook(function() error(EXCEEDED, 0) end, "", 1)
  error(EXCEEDED, 0)
end

-- Library wrappers charge their work here; the clock is read by the hook only, as it costs a
-- system call.
local function charge(steps)
  budget.used = budget.used + steps
  if budget.used > budget.limit then fail_from_now_on() end
end

local guard
guard = function()
  charge(budget.every)
  if clock() - budget.started > budget.cpu then fail_from_now_on() end
  -- Once the run has built megabytes, one instruction may copy them: look at the clock often.
  local every = gcount("count") - budget.memory > GROWN_MEMORY_KB and BUSY_EVERY or QUIET_EVERY
  if every ~= budget.every then
    budget.every = every
    sethook(guard, "", every)
  end
end

local function copy(library)
  local result = {}
  for name, value in pairs(library) do result[name] = value end
  return result
end

-- os.time and os.date only, as Argo CD's safe os; "now" is the caller's clock, and dates are
-- always UTC so that a script means the same on every machine.
local function days_from_civil(y, m, d)
  y, m = y + floor((m - 1) / 12), (m - 1) % 12 + 1  -- month 13 is January of the next year
  y = m <= 2 and y - 1 or y
  local era = floor(y / 400)
  local yoe = y - era * 400
  local doy = floor((153 * (m + (m > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function safe_os(now)
  local function field(t, name, default)
    local value = tonumber(rawget(t, name))
    if value == nil then return default end
    return floor(value)
  end
  local function time(t)
    if t == nil then return now end
    if type(t) ~= "table" then error("bad argument #1 to 'time' (table expected)", 2) end
    local days = days_from_civil(field(t, "year", 1970), field(t, "month", 1), field(t, "day", 1))
    return ((days * 24 + field(t, "hour", 12)) * 60 + field(t, "min", 0)) * 60 + field(t, "sec", 0)
  end
  local function date(format, t)
    format = format == nil and "%c" or tostring(format)
    charge(#format * 8)  -- strftime works in C, per conversion
    if sub(format, 1, 1) ~= "!" then format = "!" .. format end
    return c_date(format, t == nil and now or tonumber(t))
  end
  return {time = time, date = date}
end

local function guarded_table()
  local library = copy(table)
  local sort, concat = table.sort, table.concat
  library.sort = function(t, less)
    local n = type(t) == "table" and #t or 0
    charge(n * (1 + floor(log(n + 1) / log(2))) * 4)
    return sort(t, less)
  end
  library.concat = function(t, sep, i, j)
    local bytes = 0
    if type(t) == "table" then
      for k = tonumber(i) or 1, tonumber(j) or #t do
        local item = rawget(t, k)
        if item == nil then break end  -- concat itself refuses the hole
        bytes = bytes + (type(item) == "string" and #item or 8) + #tostring(sep or "")
      end
    end
    charge(bytes / 8)
    return concat(t, sep, i, j)
  end
  return library
end

local BASE = {"assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
              "rawset", "select", "setmetatable", "getmetatable", "tonumber", "tostring",
              "type", "unpack", "xpcall"}

local function environment(open_libs, now, c_limit)
  local env = {_VERSION = "Lua 5.1", print = function() end}
  for _, name in ipairs(BASE) do env[name] = _G[name] end
  env._G = env
  env.table = guarded_table()
  env.os = safe_os(now)
  if open_libs then
    env.string = patterns.guarded_string(charge, c_limit)
    env.math = copy(math)
    env.coroutine = copy(coroutine)
  end
  local string_meta = getmetatable("")
  string_meta.__index = env.string
  string_meta.__metatable = false
  env.require = function(name)
    local module = (name == "os" or name == "table" or name == "string" or name == "math"
                    or name == "coroutine") and env[name] or nil
    if module == nil then error("module '" .. tostring(name) .. "' not found", 2) end
    return module
  end
  return env
end

local NOT_A_STRING = "health script returned a %s that is not a string (%s)"

-- What the script returned, read with raw access only.
local function summarize(value)
  if value == nil then return "none", "", "" end
  if type(value) ~= "table" then
    return "error", "", "expect table output from Lua script, not " .. type(value)
  end
  local status, message = rawget(value, "status"), rawget(value, "message")
  if status == nil and message == nil and next(value) == nil then return "none", "", "" end
  if status ~= nil and type(status) ~= "string" then
    return "error", "", format(NOT_A_STRING, "status", type(status))
  end
  if message ~= nil and type(message) ~= "string" then
    return "error", "", format(NOT_A_STRING, "message", type(message))
  end
  return "result", status or "", message or ""
end

local function describe_error(err)
  if type(err) == "string" or type(err) == "number" then return tostring(err) end
  return "health script raised an error value of type " .. type(err)
end

return function(source, obj, open_libs, now, limit, cpu_limit, c_limit)
  local chunk, err = loadstring(source, "=health.lua")
  if chunk == nil then return "error", "", err end
  local env = environment(open_libs, now, c_limit)
  env.obj = obj
  setfenv(chunk, env)
  budget.used, budget.limit, budget.cpu, budget.started = 0, limit, cpu_limit, clock()
  budget.every, budget.memory = QUIET_EVERY, gcount("count")
  sethook(guard, "", QUIET_EVERY)
  local ok, value = pcall(chunk)
  local kind, status, message
  if ok then
    kind, status, message = summarize(value)
  else
    kind, status, message = "error", "", describe_error(value)
  end
  sethook()
  return kind, status, message
end
"""
