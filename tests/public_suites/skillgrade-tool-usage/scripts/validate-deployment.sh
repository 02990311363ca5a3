#!/bin/sh
echo "{\"score\": 1, \"details\": \"deployed\"}"
