"""What does a promotion's file work cost: pinning a tag and classifying the change?

Builds a Helm values file of about N lines (an image block, then many services' env vars,
resources and annotations, with comments and mixed quoting) and times, best of 5 rounds:

  baseline    ruamel.yaml round-trip load of the file (what any comment-keeping edit needs)
  set_image   pin a new tag (locate, splice, reload to verify)
  classify    classify the change from the old text to the new one (exempt / config)

Prints microseconds per call and each as a multiple of the baseline load, for 100 and 2,000
line files.

Run: .venv/bin/python bench/bench_promotion_edits.py
"""

from __future__ import annotations

from io import StringIO

from ruamel.yaml import YAML

from _timing import per_call_us
from headway.model.key_paths import parse_key_path
from headway.model.promotion_pipeline import HelmKey, ImageTarget
from headway.promotion.classify import classify_change
from headway.promotion.image_targets import set_image

HEAD = """\
# payments-api values. The bot edits image.tag; the rest is reviewed by hand.
image:
  repository: registry.example.com/payments-api
  tag: "3f9c2e1"   # git SHA
  pullPolicy: IfNotPresent
services:
"""
SERVICE = """\
  svc{i}:
    enabled: true  # service {i}
    env:
      - name: RPC_URL
        value: "https://rpc-{i}.internal:8545"
      - {{name: LOG_LEVEL, value: info}}
    resources:
      limits: {{cpu: "1", memory: 512Mi}}
    annotations:
      prometheus.io/scrape: 'true'
"""


def values_file(lines: int) -> str:
    text, index = HEAD, 0
    while text.count("\n") < lines:
        text += SERVICE.format(i=index)
        index += 1
    return text


def run(lines: int) -> None:
    text = values_file(lines)
    target = ImageTarget("values.yaml", HelmKey("image.tag"), None, None)
    key = parse_key_path("image.tag")
    new = set_image(text, target, "registry.example.com/payments-api:abc1234", file="v")

    def load() -> object:
        loader = YAML(typ="rt")
        loader.preserve_quotes = True
        return list(loader.load_all(StringIO(text)))

    def edit() -> object:
        return set_image(text, target, "registry.example.com/payments-api:abc1234", file="v")

    def classify() -> object:
        return classify_change(text, new, automation_keys=(key,), exempt_keys=(key,), file="v")

    budget = 2.0
    base = per_call_us(load, budget)
    for name, fn in (("baseline", load), ("set_image", edit), ("classify", classify)):
        us = base if fn is load else per_call_us(fn, budget)
        print(f"{lines:>5} lines  {name:<10} {us / 1000:8.2f} ms  {us / base:5.2f}x load")


def main() -> None:
    for lines in (100, 2000):
        run(lines)


if __name__ == "__main__":
    main()
