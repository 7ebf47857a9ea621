-- A core kind override: a claim waiting for its first consumer counts as healthy.
local function bound(o)
  return o.status ~= nil and o.status.phase == "Bound"
end
if bound(obj) then
  return {status = "Healthy"}
end
local mode = obj.metadata.annotations and obj.metadata.annotations["volume.kubernetes.io/selected-node"]
if mode == nil then
  return {status = "Healthy", message = "waiting for first consumer"}
end
return {status = "Progressing", message = string.format("binding on %s", mode)}
