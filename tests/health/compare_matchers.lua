-- Runs one call through the pure-Lua matcher and LuaJIT's C one; says whether they agree.
local pure, c_find, c_match, c_gmatch, c_gsub = ...
local function pack(ok, ...) return {ok = ok, n = select('#', ...), ...} end
local function same(a, b)
  if a.ok ~= b.ok then return false end
  if not a.ok then return true end
  if a.n ~= b.n then return false end
  for i = 1, a.n do if a[i] ~= b[i] then return false end end
  return true
end
local function all(iterate)
  return function(...) local out = {} for a, b, c in iterate(...) do out[#out + 1] = tostring(a) .. "|" .. tostring(b) .. "|" .. tostring(c) end return table.concat(out, ";") end
end
local function repl_table(t) return setmetatable({}, {__index = function(_, k) return k == "o" and "0" or nil end}) end
return function(name, s, p, extra)
  local pure_fn, c_fn
  if name == "find" then pure_fn, c_fn = pure.find, c_find
  elseif name == "find_plain" then pure_fn, c_fn = function(s, p) return pure.find(s, p, 1, true) end, function(s, p) return c_find(s, p, 1, true) end
  elseif name == "find_from" then pure_fn, c_fn = function(s, p) return pure.find(s, p, extra) end, function(s, p) return c_find(s, p, extra) end
  elseif name == "match" then pure_fn, c_fn = pure.match, c_match
  elseif name == "gmatch" then pure_fn, c_fn = all(pure.gmatch), all(c_gmatch)
  elseif name == "gsub" then pure_fn, c_fn = function(s, p) return pure.gsub(s, p, extra) end, function(s, p) return c_gsub(s, p, extra) end
  elseif name == "gsub_fn" then
    local f = function(a, b) if a == "l" then return nil end return "{" .. tostring(a) .. tostring(b) .. "}" end
    pure_fn, c_fn = function(s, p) return pure.gsub(s, p, f, 3) end, function(s, p) return c_gsub(s, p, f, 3) end
  elseif name == "gsub_table" then
    pure_fn, c_fn = function(s, p) return pure.gsub(s, p, repl_table()) end, function(s, p) return c_gsub(s, p, repl_table()) end
  end
  local a, b = pack(pcall(pure_fn, s, p)), pack(pcall(c_fn, s, p))
  if same(a, b) then return true, "" end
  return false, tostring(a[1]) .. "," .. tostring(a[2]) .. " vs " .. tostring(b[1]) .. "," .. tostring(b[2])
end
