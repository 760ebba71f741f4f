"""Encrypted multipart uploads through boto3's transfer manager: upload_file above its multipart
threshold with SSE-KMS (a key id) and with SSE-C, download_file back, and the refusals; prints one
JSON object.

Usage: python3 boto3_sse_multipart.py <endpoint> <access-key> <secret-key> <bucket> <kms-key-id> <file>
"""
import json
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from boto3_refusals import refusal

MiB = 1024 * 1024


def same_file(path: str, other: str) -> bool:
    with open(path, "rb") as one, open(other, "rb") as two:
        return one.read() == two.read()


def main() -> None:
    endpoint, access_key, secret_key, bucket, key_id, path = sys.argv[1:7]
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    transfer = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=2)
    seen = {}
    s3.create_bucket(Bucket=bucket)

    s3.upload_file(path, bucket, "kms.bin", ExtraArgs={"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": key_id}, Config=transfer)
    head = s3.head_object(Bucket=bucket, Key="kms.bin")
    seen["kms_head"] = [head["ServerSideEncryption"], head["SSEKMSKeyId"], head["ETag"].strip('"').split("-")[-1]]
    s3.download_file(bucket, "kms.bin", path + ".kms", Config=transfer)
    seen["kms_same"] = same_file(path, path + ".kms")
    part = s3.get_object(Bucket=bucket, Key="kms.bin", PartNumber=2)
    seen["kms_part_2"] = [part["ContentLength"], part["PartsCount"]]

    key = bytes(range(32))
    ssec = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}
    s3.upload_file(path, bucket, "ssec.bin", ExtraArgs=ssec, Config=transfer)
    head = s3.head_object(Bucket=bucket, Key="ssec.bin", **ssec)
    seen["ssec_head"] = [head["SSECustomerAlgorithm"], head["ETag"].strip('"').split("-")[-1]]
    s3.download_file(bucket, "ssec.bin", path + ".ssec", ExtraArgs=ssec, Config=transfer)
    seen["ssec_same"] = same_file(path, path + ".ssec")
    seen["ssec_no_key"] = refusal(lambda: s3.get_object(Bucket=bucket, Key="ssec.bin"))
    other = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": bytes(reversed(range(32)))}
    seen["ssec_wrong_key"] = refusal(lambda: s3.get_object(Bucket=bucket, Key="ssec.bin", **other))

    upload = s3.create_multipart_upload(Bucket=bucket, Key="ssec-parts.bin", **ssec)
    seen["ssec_part_no_key"] = refusal(lambda: s3.upload_part(Bucket=bucket, Key="ssec-parts.bin", UploadId=upload["UploadId"], PartNumber=1, Body=b"x"))
    seen["ssec_part_wrong_key"] = refusal(lambda: s3.upload_part(Bucket=bucket, Key="ssec-parts.bin", UploadId=upload["UploadId"], PartNumber=1, Body=b"x", **other))
    seen["ssec_parts_stored"] = len(s3.list_parts(Bucket=bucket, Key="ssec-parts.bin", UploadId=upload["UploadId"]).get("Parts", []))
    print(json.dumps(seen))


main()
