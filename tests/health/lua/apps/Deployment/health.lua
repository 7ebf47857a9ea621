-- Overrides the built-in: only counts ready replicas against spec.replicas.
local want = obj.spec.replicas or 1
local ready = (obj.status and obj.status.readyReplicas) or 0
if ready >= want then
  return {status = "Healthy", message = tostring(ready) .. "/" .. tostring(want) .. " ready"}
end
return {status = "Progressing", message = tostring(ready) .. "/" .. tostring(want) .. " ready"}
